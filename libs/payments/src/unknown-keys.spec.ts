import { runInNewContext } from 'node:vm';
import { objectOfKnownKeysProblems, unknownKeyProblem, unknownKeyProblems } from './unknown-keys';

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

describe('objectOfKnownKeysProblems', () => {
  const known = new Set(['since', 'state']);
  const problems = (value: unknown) =>
    objectOfKnownKeysProblems(
      value,
      'filter',
      'filter must be an object',
      known,
      (shown) => `${shown} is not a field`,
    ).map(({ field, rule }) => `${field} ${rule}`);

  it('takes a plain object, a null-prototype one and a class instance of known fields', () => {
    class Query {
      state = 'in_doubt';
      describe(): string {
        return this.state;
      }
    }
    expect(problems({ since: '2026-11-01', state: 'in_doubt' })).toEqual([]);
    expect(problems(Object.assign(Object.create(null) as object, { state: 'failed' }))).toEqual([]);
    expect(problems(new Query())).toEqual([]);
    expect(problems(Object.freeze({ state: 'failed' }))).toEqual([]);
    // Made in another realm (a vm context), whose Object.prototype is not this one.
    expect(problems(runInNewContext("({ state: 'failed' })"))).toEqual([]);
  });

  it('refuses what is not a plain object: a Date, a Map, a list, a Proxy that cannot be read', () => {
    const unreadable = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no keys');
        },
      },
    );
    for (const value of [
      null,
      'in_doubt',
      [],
      new Date(),
      new Map([['state', 'in_doubt']]),
      unreadable,
    ]) {
      expect(problems(value)).toEqual(['filter isObject']);
    }
  });

  it('sees a misspelt key however it is held: inherited, a getter, not enumerable', () => {
    class WithGetter {
      get states(): string {
        return 'in_doubt';
      }
    }
    expect(problems(Object.create({ states: 'in_doubt' }))).toEqual(['states whitelist']);
    expect(problems(new WithGetter())).toEqual(['states whitelist']);
    expect(problems(Object.defineProperty({}, 'states', { value: 'in_doubt' }))).toEqual([
      'states whitelist',
    ]);
    // A Symbol key is no field anyone could mean.
    expect(problems({ state: 'failed', [Symbol('tag')]: 1 })).toEqual([]);
  });
});
