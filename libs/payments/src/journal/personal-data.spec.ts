import { maskPersonalData } from './personal-data';

/** `message` as the journal keeps it for `request`. */
function kept(message: string, request: object): string {
  const answer: Record<string, unknown> = { message };
  maskPersonalData(answer, request, ['message']);
  return answer.message as string;
}

describe('maskPersonalData', () => {
  it('masks the phone number however its national digits are written, and keeps the country code', () => {
    const request = { phoneNumber: '+254712345678' };
    for (const [written, masked] of [
      ['0712345678', '[personal data]'],
      ['(0712) 345-678', '[personal data]'],
      ['0712/345/678', '[personal data]'],
      ['254712345678', '254[personal data]'],
      ['+254 712 345 678', '+254 [personal data]'],
      ['+254 (0)712 345 678', '+254 [personal data]'],
    ]) {
      expect(kept(`Sent to ${written}.`, request)).toBe(`Sent to ${masked}.`);
    }
    // A number written after it is not taken for a part of it.
    expect(kept('Sent to 0712 345 678 1500 KES', request)).toBe('Sent to [personal data] 1500 KES');
    expect(kept('+254 712 345 678 12:30', request)).toBe('+254 [personal data] 12:30');
  });

  it('masks a phone number written with other separators, percent-encoded or in full-width digits', () => {
    const request = { phoneNumber: '08031234567' };
    for (const written of [
      '0803_123_4567',
      '0803,123,4567',
      '0803%20123%204567',
      '０８０３１２３４５６７',
      '0803 - 123 - 4567',
    ]) {
      expect(kept(`Sent to ${written}.`, request)).toBe('Sent to [personal data].');
    }
    // The digits of a time or an amount next to it are not joined to it.
    expect(kept('0803 123 4567 at 12:30', request)).toBe('[personal data] at 12:30');
  });

  it('masks the words of a name in a percent-encoded text', () => {
    expect(kept('to=Ada%20Obi&x=1', { accountHolderName: 'Ada Obi' })).toBe(
      'to=[personal data]%20[personal data]&x=1',
    );
  });

  it('masks an account number that is no phone number in any case, inside longer text too', () => {
    const request = { accountNumber: 'GB29NWBK60161331926819' };
    expect(kept('to iban gb29nwbk60161331926819/x', request)).toBe('to iban [personal data]/x');
  });

  it('masks every word of a long name, and a name in another Unicode form', () => {
    const words = Array.from({ length: 64 }, (_, index) => `w${String(index).padStart(2, '0')}`);
    const name = words.join(' ');
    expect(
      kept(`to ${words.at(-1)!.toUpperCase()} and ${words[0]}`, { accountHolderName: name }),
    ).toBe('to [personal data] and [personal data]');
    const composed = 'José Ngũgĩ';
    expect(kept(`to ${composed.normalize('NFD')}`, { accountHolderName: composed })).toBe(
      'to [personal data]',
    );
  });

  it("masks the account number, the holder's name and its words, in any case", () => {
    const request = { accountNumber: '0123456789', accountHolderName: 'Ada Obi' };
    expect(kept('ADA OBI, Obi Ada, acct 0123456789', request)).toBe(
      '[personal data], [personal data] [personal data], acct [personal data]',
    );
  });

  it('masks a name whatever apostrophe it is written with, and a Turkish dotted capital I', () => {
    expect(kept('to WANJIRU O’BRIEN', { accountHolderName: "Wanjiru O'Brien" })).toBe(
      'to [personal data]',
    );
    expect(kept("to Ng'ang'a", { accountHolderName: 'Kamau Ng’ang’a' })).toBe('to [personal data]');
    expect(kept('to İLKER ÇELİK and İlker', { accountHolderName: 'İlker Çelik' })).toBe(
      'to [personal data] and [personal data]',
    );
  });

  it('leaves other numbers, short words and a message without personal data as they are', () => {
    const request = { phoneNumber: '0712345678', accountHolderName: 'Al B' };
    expect(kept('Processed successfully: 9BD103350408eR, 500 KES', request)).toBe(
      'Processed successfully: 9BD103350408eR, 500 KES',
    );
    expect(kept('All went well', request)).toBe('All went well');
  });

  it('keeps a message without personal data as the service wrote it, compatibility forms and all', () => {
    // NFKC would read `ﬁ` as `fi` and `①` as `1`: only a masked text is written back normalised.
    const message = 'Pro\uFB01le ① paid: ＫＥＳ 500';
    expect(kept(message, { phoneNumber: '0712345678', accountHolderName: 'Ada Obi' })).toBe(
      message,
    );
  });

  it('takes names with the characters of a pattern literally', () => {
    expect(kept('To A.B. (x)+', { accountHolderName: 'A.B. (x)+' })).toBe('To [personal data]');
    expect(kept('To AxB', { accountHolderName: 'A.B' })).toBe('To AxB');
  });

  it('masks only the fields it is given, and leaves other values as they are', () => {
    const answer: Record<string, unknown> = {
      success: true,
      amount: 712345678,
      transaction_reference: '9BD712345678eW',
      trackingId: 'trk-254712345678',
      checkout_url: 'https://pay.example/c?msisdn=254712345678&id=1',
    };
    maskPersonalData(answer, { phoneNumber: '+254 712 345 678' }, ['trackingId', 'message']);
    expect(answer).toEqual({
      success: true,
      amount: 712345678,
      transaction_reference: '9BD712345678eW',
      trackingId: 'trk-254[personal data]',
      checkout_url: 'https://pay.example/c?msisdn=254712345678&id=1',
    });
  });

  it('masks the words of a name as whole words only', () => {
    const request = { accountHolderName: 'Success Moyo' };
    expect(kept('Transaction request sent successfully to SUCCESS MOYO', request)).toBe(
      'Transaction request sent successfully to [personal data]',
    );
    expect(kept('Moyo, Success: paid', request)).toBe('[personal data], [personal data]: paid');
    expect(kept('Sent to MARY JANE', { accountHolderName: 'Mary-Jane' })).toBe(
      'Sent to [personal data] [personal data]',
    );
  });

  it('never searches a mask again: a name made of its words does not grow the text', () => {
    const name = ('Success' + ' per son data personal'.repeat(40)).slice(0, 255);
    const message = `SUCCESS per son personal data ${'x'.repeat(100)}`;
    const result = kept(message, { accountHolderName: name, phoneNumber: '0712345678' });
    expect(result.length).toBeLessThanOrEqual(message.length * 4);
    expect(result).not.toMatch(/\b(per|son)\b/i);
  });
});
