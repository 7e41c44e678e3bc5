import fc from 'fast-check';
import { OPERATIONS } from './operations';
import type { AcceptanceDecoding } from './wire';
import { OPERATION_CASES } from '../spec-support/operation-cases';
import { prepareRequest } from './request-rules';
import type { BodyEntry } from './wire';
import {
  correlatedUrl,
  decodeAcceptanceByTable,
  decodeResponse,
  encodeBody,
  encodeBodyByTable,
  REQUEST_WIRE_KEYS,
  RESPONSE_WIRE_KEYS,
} from './wire';

describe('correlatedUrl', () => {
  const cases: [string, string, string][] = [
    ['https://shop.example/cb', 'k-1', 'https://shop.example/cb?malipo_key=k-1'],
    ['https://shop.example/cb?order=7', 'k 2', 'https://shop.example/cb?order=7&malipo_key=k%202'],
    ['https://shop.example/cb#top', 'k-3', 'https://shop.example/cb?malipo_key=k-3#top'],
    ['https://shop.example/cb?malipo_key=old', 'k-4', 'https://shop.example/cb?malipo_key=k-4'],
    ['https://shop.example/cb', 'k/5', 'https://shop.example/cb?malipo_key=k%2F5'],
    ['https://shop.example/cb?q=a%20b', 'k-6', 'https://shop.example/cb?q=a%20b&malipo_key=k-6'],
    ['http://xn--a.com/cb?x=%20', 'k-7', 'http://xn--a.com/cb?x=%20&malipo_key=k-7'],
  ];

  it.each(cases)('appends the key to %s', (url, key, expected) => {
    expect(correlatedUrl(url, key)).toBe(expected);
  });

  it.each([
    'https://shop.example/cb?src=x&malipo%5Fkey=order-A',
    'https://shop.example/cb?malipo%5fkey=order-A&src=x',
    'https://shop.example/cb?malipo_key&src=x',
  ])("leaves %s one malipo_key, the call's own, as a receiver decodes the query", (url) => {
    const params = new URL(correlatedUrl(url, 'order-E')).searchParams;

    expect(params.getAll('malipo_key')).toEqual(['order-E']);
    expect(params.get('src')).toBe('x');
  });
});

/** Values of every JSON type, with the empty and absent ones the decoders treat apart. */
const wireValue = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    '',
    0,
    -1,
    1500,
    true,
    false,
    [],
    {},
    'PENDING',
    'USD',
    'local',
    '+254712345678',
    '0712345678',
    'https://shop.example.com/cb?order=7',
  ),
  fc.string({ maxLength: 20 }),
  fc.double(),
  fc.jsonValue({ maxDepth: 2 }),
);

const OPERATION_ROWS = Object.values(OPERATIONS);

describe('generated body encoding (generated-function.ts)', () => {
  const requestFields = Object.keys(REQUEST_WIRE_KEYS);
  const rows = OPERATION_ROWS.filter((row) => row.body !== undefined);

  it.each(rows.map((row) => [row.name, row] as const))(
    '%s: writes the same keys, values and order as the table-driven loop',
    (_name, { body }) => {
      const entries = body ?? [];
      const request = fc.record(Object.fromEntries(requestFields.map((f) => [f, wireValue])), {
        requiredKeys: [],
      });
      fc.assert(
        fc.property(
          request,
          fc.string({ minLength: 1, maxLength: 40 }),
          fc.boolean(),
          (values, idempotencyKey, correlate) => {
            const context = { idempotencyKey, correlate };
            // Encoding follows validation; unvalidated values may throw (a callback URL that
            // is not one), and must throw alike.
            const encoded = (encode: () => object) => {
              try {
                const body = encode();
                return { entries: Object.entries(body), json: JSON.stringify(body) };
              } catch (error: unknown) {
                return { error: String(error) };
              }
            };
            expect(encoded(() => encodeBody(values, entries, context))).toEqual(
              encoded(() => encodeBodyByTable(values, entries, context)),
            );
          },
        ),
        { numRuns: 500 },
      );
    },
  );
});

describe('generated acceptance decoding (generated-function.ts)', () => {
  const rows = OPERATION_ROWS.filter((row) => row.response.kind === 'acceptance');
  const wireKeys = [...new Set(Object.values(RESPONSE_WIRE_KEYS).flat())];

  it('covers the acceptance of every operation that moves money', () => {
    expect(rows.map((row) => row.name)).toEqual(
      expect.arrayContaining([
        'collections.mpesa',
        'collections.card',
        'collections.panAfrican',
        'payouts.mpesa',
        'payouts.panAfrican',
        'payouts.merchant',
      ]),
    );
  });

  it.each(rows.map((row) => [row.name, row] as const))(
    '%s: decodes and refuses exactly as the table-driven loop does',
    (_name, { response }) => {
      const decoding = response as AcceptanceDecoding;
      // Mostly well-formed answers, so that the success path is exercised as much as the refusals.
      const body = fc.record(
        {
          ...Object.fromEntries(wireKeys.map((key) => [key, wireValue])),
          success: fc.oneof(fc.constant(true), wireValue),
          transaction_reference: fc.oneof(fc.constant('TX-1'), wireValue),
        },
        { requiredKeys: [] },
      );
      const request = fc.record({ amount: fc.oneof(fc.double(), fc.constant(undefined)) });
      fc.assert(
        fc.property(body, request, (answer, sent) => {
          const generated = decodeResponse(answer, decoding, sent);
          const byTable = decodeAcceptanceByTable(answer, decoding, sent);
          expect(generated).toStrictEqual(byTable);
          if (generated.ok && byTable.ok) {
            expect(Object.keys(generated.record)).toEqual(Object.keys(byTable.record));
          }
        }),
        { numRuns: 1_000 },
      );
    },
  );
});

describe('record decoding', () => {
  const decoding = OPERATIONS.transactionsStatus.response;
  const record = (fields: Record<string, unknown>) => ({
    code: 'TX-1',
    amount: 10,
    transaction_details: { status: 'failed' },
    ...fields,
  });

  it("keeps the documented key's value when another key reads as the same field", () => {
    for (const body of [
      record({ transactionDetails: { status: 'success' } }),
      { transactionDetails: { status: 'success' }, ...record({}) },
      record({ transaction__details: { status: 'success' } }),
    ]) {
      const decoded = decodeResponse(body, decoding, { reference: 'TX-1' });

      expect(decoded).toMatchObject({
        ok: true,
        record: { transactionDetails: { status: 'failed' } },
      });
      // The other stays in `_raw`, as the service sent it.
      expect(decoded.ok && decoded.record._raw).toBe(body);
    }
  });

  it('refuses the record of another transaction than the one asked for', () => {
    expect(decodeResponse(record({}), decoding, { reference: 'TX-2' })).toEqual({
      ok: false,
      code: 'INVALID_RESPONSE',
      problem: "the response's code is not the reference asked for",
    });
  });

  it('refuses a record that names no transaction: no code, or a null one', () => {
    const { code: _code, ...nameless } = record({});
    for (const body of [nameless, record({ code: null })]) {
      expect(decodeResponse(body, decoding, { reference: 'TX-1' })).toEqual({
        ok: false,
        code: 'INVALID_RESPONSE',
        problem: 'the response has no code: it does not say it is the reference asked for',
      });
    }
  });
});

describe('amounts on the wire', () => {
  const context = { correlate: false, idempotencyKey: 'k' };
  const DEFAULTS = { walletType: 'local', username: 'shop', callbackUrl: undefined } as const;
  /** A valid request of each operation (transfers have no case in operation-cases.ts). */
  const requestOf = (name: string) =>
    name === 'transfers.send'
      ? { receiverUsername: 'beta', amount: 10, narration: 'Float top-up' }
      : OPERATION_CASES.find((c) => c.operation === name)?.request;
  /** The operations that send an amount, with their valid request and the entry that sends it. */
  const sending = Object.values(OPERATIONS).flatMap((operation) => {
    const entry = (operation as { body?: readonly BodyEntry[] }).body?.find(
      (candidate) => typeof candidate === 'object' && 'decimals' in candidate,
    ) as { decimals: number } | undefined;
    const request = requestOf(operation.name);
    return entry && request ? [[operation.name, operation, request, entry.decimals] as const] : [];
  });

  it('covers every operation that moves money', () => {
    expect(sending.map(([name]) => name).sort()).toEqual([
      'collections.card',
      'collections.mpesa',
      'collections.panAfrican',
      'payouts.merchant',
      'payouts.mpesa',
      'payouts.panAfrican',
      'transfers.send',
    ]);
  });

  it.each(sending)(
    '%s sends the decimal its amount was validated as, with the decimals of its rule',
    (_name, operation, request, decimals) => {
      const sent = (amount: number) => {
        const prepared = prepareRequest(operation as never, { ...request, amount }, DEFAULTS);
        return encodeBody(prepared, (operation as { body: readonly BodyEntry[] }).body, context)
          .amount;
      };
      // A sum's binary artefact, within every operation's limits.
      expect(sent(0.01 + 8.04 + 1.95 + 100)).toBe(110);
      expect(sent(10 * 1.1 * 100)).toBe(1100);
      // As many decimals as the rule allows are sent as they are; one more is refused.
      const exact = Number(`150.${'3'.repeat(decimals)}`);
      expect(sent(exact)).toBe(exact);
      expect(() => sent(Number(`150.${'3'.repeat(decimals + 1)}`))).toThrow(/at most \d decimals/);
    },
  );

  it('sends a huge KES amount as the decimal of 2 places its rule took, as a payout run does', () => {
    const merchant = OPERATIONS.payoutsMerchant;
    const request = { ...requestOf('payouts.merchant'), amount: 120_000_000_000.0001 };
    // Past 10^11 KES the rule cannot tell a hundredth of a cent from a float's rounding.
    const prepared = prepareRequest(merchant, request, DEFAULTS);

    expect(encodeBody(prepared, merchant.body!, context).amount).toBe(120_000_000_000);
  });
});
