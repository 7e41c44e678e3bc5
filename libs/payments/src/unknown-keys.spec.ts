import { unknownKeyProblem, unknownKeyProblems } from './unknown-keys';

describe('unknownKeyProblems', () => {
  const known = new Set(['idempotencyKey', 'resend']);
  const message = (shown: string) => `${shown} is not a call option`;

  it('names every own key the list lacks, in key order, and nothing for known keys', () => {
    expect(
      unknownKeyProblems(
        { idempotencykey: 'a', resend: true, retryAmbigous: false, idempotencyKey: 'b' },
        known,
        message,
      ),
    ).toEqual([
      {
        field: 'idempotencykey',
        rule: 'whitelist',
        message: 'idempotencykey is not a call option',
      },
      { field: 'retryAmbigous', rule: 'whitelist', message: 'retryAmbigous is not a call option' },
    ]);
    expect(unknownKeyProblems({ idempotencyKey: 'a', resend: false }, known, message)).toEqual([]);
  });

  it('sees an own __proto__ key and ignores inherited ones', () => {
    const withOwnProto = JSON.parse('{"__proto__": {"resend": true}}') as object;
    expect(unknownKeyProblems(withOwnProto, known, message)).toEqual([
      expect.objectContaining({ field: '__proto__' }),
    ]);
    expect(unknownKeyProblems(Object.create({ inherited: 1 }) as object, known, message)).toEqual(
      [],
    );
  });

  it('shows at most 64 characters of a key, in the field and the message alike', () => {
    const problem = unknownKeyProblem('k'.repeat(10_000), message);
    expect(problem.field).toBe('k'.repeat(64));
    expect(problem.message).toBe(`${'k'.repeat(64)} is not a call option`);
  });
});
