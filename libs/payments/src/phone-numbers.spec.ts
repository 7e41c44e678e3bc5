import { nationalNumber } from './phone-numbers';

describe('nationalNumber', () => {
  it.each([
    ['0712345678', '712345678'],
    ['+254712345678', '712345678'],
    ['254712345678', '712345678'],
    ['+254 712 345 678', '712345678'],
    ['712345678', '712345678'],
    ['+2348031234567', '8031234567'],
    ['08031234567', '8031234567'],
    ['2348031234567', '8031234567'],
    ['002348031234567', '8031234567'],
    ['+27821234567', '821234567'],
    ['0821234567', '821234567'],
    ['+201001234567', '1001234567'],
    ['+256 (772) 123-456', '772123456'],
    ['+14155550123', '14155550123'],
    // The same number however else it is written: a trunk 0 kept after the code, slashes,
    // underscores, full-width digits.
    ['+234 (0) 803 123 4567', '8031234567'],
    ['+234 0803 123 4567', '8031234567'],
    ['0803/123/4567', '8031234567'],
    ['0803_123_4567', '8031234567'],
    ['０８０３１２３４５６７', '8031234567'],
    ['+254 (0)712 345 678', '712345678'],
  ])('reads %s as %s', (written, national) => {
    expect(nationalNumber(written)).toBe(national);
  });

  it('tells two Nigerian numbers apart that share their last nine digits', () => {
    expect(nationalNumber('+2348031234567')).not.toBe(nationalNumber('+2347031234567'));
  });

  it.each(['254712***678', 'Amina Otieno', '', '12345', '+254 712 345 678 999 999'])(
    'reads %p as no number',
    (written) => {
      expect(nationalNumber(written)).toBeUndefined();
    },
  );
});
