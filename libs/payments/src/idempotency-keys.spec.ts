import fc from 'fast-check';
import { PaymentsValidationError } from './errors';
import {
  canonicalJson,
  IDEMPOTENCY_KEY_MEMORY,
  IdempotencyKeyRegistry,
  requestFingerprint,
} from './idempotency-keys';
import type { EncodedRequest } from './wire';

const PAYOUT: EncodedRequest = {
  method: 'POST',
  url: '/api/v2/withdrawal',
  body: {
    phone_number: '0712345678',
    amount: 500,
    narration: 'Refund',
    callback_url: 'https://shop.example.com/hooks?malipo_key=refund-42',
  },
};

/** The error of `remember`, or undefined when it accepted the key. */
function refusal(registry: IdempotencyKeyRegistry, key: string, fingerprint: string): unknown {
  try {
    registry.remember(key, fingerprint, 'MpesaPayoutRequest');
    return undefined;
  } catch (error: unknown) {
    return error;
  }
}

describe('canonicalJson', () => {
  // Fingerprints are kept in shared journals: the form must never change between versions, or a
  // retry after an upgrade would read as another request under the same key.
  it('writes sorted keys at every level, skips undefined fields and keeps array holes as null', () => {
    const value = {
      zeta: [3, undefined, { b: 'x', a: null }, []],
      alpha: { 'quoted"key': 'é\n', empty: {}, gone: undefined },
      amount: 100.5,
      flag: false,
    };
    expect(canonicalJson(value)).toBe(
      '{"alpha":{"empty":{},"quoted\\"key":"é\\n"},"amount":100.5,"flag":false,' +
        '"zeta":[3,null,{"a":null,"b":"x"},[]]}',
    );
    expect(canonicalJson(['op', 'POST', '/p', null])).toBe('["op","POST","/p",null]');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ only: undefined })).toBe('{}');
  });

  // The definition, field by field, that the flat bodies' single JSON.stringify must match.
  const byDefinition = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(byDefinition).join(',')}]`;
    if (typeof value === 'object' && value !== null) {
      const fields = Object.entries(value)
        .filter(([, field]) => field !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, field]) => `${JSON.stringify(key)}:${byDefinition(field)}`);
      return `{${fields.join(',')}}`;
    }
    return JSON.stringify(value) ?? 'null';
  };

  it('writes flat bodies as the definition does, whatever their keys and the order they came in', () => {
    const key = fc.oneof(
      fc.string(),
      fc.constantFrom('1', '10', '2', '01', '4294967295', '1a', '__proto__', 'amount'),
    );
    const field = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.constant(-0),
    );
    fc.assert(
      fc.property(fc.dictionary(key, field), fc.boolean(), (fields, reversed) => {
        const entries = Object.entries(fields);
        const body = Object.fromEntries(reversed ? entries.reverse() : entries);
        expect(canonicalJson(body)).toBe(byDefinition(body));
        expect(canonicalJson(['op', body])).toBe(byDefinition(['op', body]));
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps the fingerprint of a known request', () => {
    expect(requestFingerprint('payouts.mpesa', PAYOUT)).toBe(
      'WGkKYO+fDOK33cvfsxLfrVAJr6cJMjdUPx7i//PQvyo=',
    );
  });
});

describe('requestFingerprint', () => {
  const fingerprint = (encoded: EncodedRequest, name = 'payouts.mpesa') =>
    requestFingerprint(name, encoded);

  it('is the same for the same request, whatever the order of its body keys', () => {
    const reordered = Object.fromEntries(Object.entries(PAYOUT.body!).reverse());

    expect(fingerprint({ ...PAYOUT, body: reordered })).toBe(fingerprint(PAYOUT));
    expect(fingerprint(PAYOUT)).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it('differs with the amount, the body, the path, the method or the operation', () => {
    const variants = [
      fingerprint(PAYOUT),
      fingerprint({ ...PAYOUT, body: { ...PAYOUT.body, amount: 5000 } }),
      fingerprint({ ...PAYOUT, body: { ...PAYOUT.body, amount: '500' } }),
      fingerprint({ ...PAYOUT, body: { ...PAYOUT.body, wallet_type: 'USD' } }),
      fingerprint({ ...PAYOUT, url: '/api/v3/withdrawal' }),
      fingerprint({ method: 'GET', url: PAYOUT.url }),
      fingerprint(PAYOUT, 'collections.mpesa'),
    ];

    expect(new Set(variants).size).toBe(variants.length);
  });

  it('holds no value of the body', () => {
    const value = fingerprint(PAYOUT);

    expect(value).not.toContain('712345678');
    expect(value).not.toContain('Refund');
  });
});

describe('IdempotencyKeyRegistry', () => {
  it('allows a key again with the same request: a retry', () => {
    const registry = new IdempotencyKeyRegistry();

    expect(refusal(registry, 'refund-42', 'A')).toBeUndefined();
    expect(refusal(registry, 'refund-42', 'A')).toBeUndefined();
    expect(registry.size).toBe(1);
  });

  it('refuses a key used for another request, naming the field and rule only', () => {
    const registry = new IdempotencyKeyRegistry();
    registry.remember('refund-42', 'A', 'MpesaPayoutRequest');

    const error = refusal(registry, 'refund-42', 'B');

    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect(error).toMatchObject({
      target: 'MpesaPayoutRequest',
      errors: [
        {
          field: 'idempotencyKey',
          rule: 'reused',
          message: expect.stringContaining('a new request needs a new idempotencyKey') as string,
        },
      ],
    });
    expect((error as Error).message).not.toMatch(/\bA\b|\bB\b/);
    // The refusal changed nothing: the key still names the first request.
    expect(refusal(registry, 'refund-42', 'A')).toBeUndefined();
    expect(refusal(registry, 'refund-42', 'B')).toBeInstanceOf(PaymentsValidationError);
  });

  it('keeps the last maxKeys keys used, a retry counting as a use', () => {
    const registry = new IdempotencyKeyRegistry({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c']) registry.remember(key, key, 'T');
    registry.remember('a', 'a', 'T');

    registry.remember('d', 'd', 'T');

    expect(registry.size).toBe(3);
    // `b` was the least recently used: forgotten, so it may name another request now.
    for (const key of ['a', 'c', 'd']) {
      expect(refusal(registry, key, 'other')).toBeInstanceOf(PaymentsValidationError);
    }
    expect(refusal(registry, 'b', 'other')).toBeUndefined();
  });

  it('keeps 10,000 keys by default', () => {
    const registry = new IdempotencyKeyRegistry();
    for (let i = 0; i < IDEMPOTENCY_KEY_MEMORY.maxKeys; i++) registry.remember(`k${i}`, 'A', 'T');

    expect(IDEMPOTENCY_KEY_MEMORY.maxKeys).toBe(10_000);
    expect(refusal(registry, 'k0', 'B')).toBeInstanceOf(PaymentsValidationError);
    registry.remember('one-more', 'A', 'T');
    expect(registry.size).toBe(10_000);
    expect(refusal(registry, 'k1', 'B')).toBeInstanceOf(PaymentsValidationError);
    expect(refusal(registry, 'k0', 'B')).toBeUndefined();
  });

  it('forgets keys not used for more than maxAgeMs (24 h by default)', () => {
    let now = 1_000_000;
    const registry = new IdempotencyKeyRegistry({ now: () => now });
    const day = 24 * 60 * 60 * 1000;
    registry.remember('old', 'A', 'T');
    now += day / 2;
    registry.remember('recent', 'A', 'T');

    now += day / 2;
    expect(refusal(registry, 'old', 'B')).toBeInstanceOf(PaymentsValidationError);
    now += 1;
    expect(refusal(registry, 'old', 'B')).toBeUndefined();
    expect(refusal(registry, 'recent', 'B')).toBeInstanceOf(PaymentsValidationError);
    expect(IDEMPOTENCY_KEY_MEMORY.maxAgeMs).toBe(day);
  });

  it('counts the age from the last use', () => {
    let now = 0;
    const registry = new IdempotencyKeyRegistry({ maxAgeMs: 100, now: () => now });
    registry.remember('k', 'A', 'T');
    now = 90;
    registry.remember('k', 'A', 'T');

    now = 150;

    expect(refusal(registry, 'k', 'B')).toBeInstanceOf(PaymentsValidationError);
  });

  it('forgets every key on clear()', () => {
    const registry = new IdempotencyKeyRegistry();
    registry.remember('k', 'A', 'T');

    registry.clear();

    expect(refusal(registry, 'k', 'B')).toBeUndefined();
  });
});
