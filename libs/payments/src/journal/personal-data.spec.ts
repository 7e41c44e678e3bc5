import { maskPersonalData } from './personal-data';

/** `message` as the journal keeps it for `request`. */
function kept(message: string, request: object): string {
  const answer: Record<string, unknown> = { message };
  maskPersonalData(answer, request, ['message']);
  return answer.message as string;
}

describe('maskPersonalData', () => {
  it('masks the phone number in any writing of its national number', () => {
    const request = { phoneNumber: '0712345678' };
    for (const written of ['0712345678', '254712345678', '+254 712 345 678', '(0712) 345-678']) {
      expect(kept(`Sent to ${written}.`, request)).toBe('Sent to [personal data].');
    }
    expect(kept('Sent to 0712345678 100 KES', request)).toBe('Sent to 0[personal data] 100 KES');
  });

  it("masks the account number, the holder's name and its words, in any case", () => {
    const request = { accountNumber: '0123456789', accountHolderName: 'Ada Obi' };
    expect(kept('ADA OBI, Obi Ada, acct 0123456789', request)).toBe(
      '[personal data], [personal data] [personal data], acct [personal data]',
    );
  });

  it('leaves other numbers, short words and a message without personal data as they are', () => {
    const request = { phoneNumber: '0712345678', accountHolderName: 'Al B' };
    expect(kept('Processed successfully: 9BD103350408eR, 500 KES', request)).toBe(
      'Processed successfully: 9BD103350408eR, 500 KES',
    );
    expect(kept('All went well', request)).toBe('All went well');
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
      trackingId: 'trk-[personal data]',
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
