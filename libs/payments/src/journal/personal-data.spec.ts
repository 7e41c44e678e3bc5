import { withoutPersonalData } from './personal-data';

describe('withoutPersonalData', () => {
  it('masks the phone number in any writing of its national number', () => {
    const request = { phoneNumber: '0712345678' };
    for (const written of ['0712345678', '254712345678', '+254 712 345 678', '(0712) 345-678']) {
      expect(withoutPersonalData(`Sent to ${written}.`, request)).toBe('Sent to [personal data].');
    }
    expect(withoutPersonalData('Sent to 0712345678 100 KES', request)).toBe(
      'Sent to 0[personal data] 100 KES',
    );
  });

  it("masks the account number, the holder's name and its words, in any case", () => {
    const request = { accountNumber: '0123456789', accountHolderName: 'Ada Obi' };
    expect(withoutPersonalData('ADA OBI, Obi Ada, acct 0123456789', request)).toBe(
      '[personal data], [personal data] [personal data], acct [personal data]',
    );
  });

  it('leaves other numbers, short words and a message without personal data as they are', () => {
    const request = { phoneNumber: '0712345678', accountHolderName: 'Al B' };
    expect(withoutPersonalData('Processed successfully: 9BD103350408eR, 500 KES', request)).toBe(
      'Processed successfully: 9BD103350408eR, 500 KES',
    );
    expect(withoutPersonalData('All went well', request)).toBe('All went well');
  });

  it('takes names with the characters of a pattern literally', () => {
    expect(withoutPersonalData('To A.B. (x)+', { accountHolderName: 'A.B. (x)+' })).toBe(
      'To [personal data]',
    );
    expect(withoutPersonalData('To AxB', { accountHolderName: 'A.B' })).toBe('To AxB');
  });
});
