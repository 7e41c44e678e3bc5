import { hasAtMostDecimals } from './money';
import fc from 'fast-check';
import type { OperationCase } from '../spec-support/operation-cases';
import { callOperation, OPERATION_CASES } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';
import { PaymentsValidationError } from './errors';
import type { PaymentsClient } from './payments-client';
import { REQUEST_RULES } from './request-rules';

/** The contract's rules (docs/wire-contract.md), written independently of the library's tables. */
const snakeCase = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const CONSTANTS: Record<string, Record<string, string>> = {
  'collections.mpesa': { channel: 'MOBILE_MONEY_KE', currency: 'KES' },
  'collections.card': { channel: 'card', payment_method: 'card', currency: 'KES' },
  'payouts.mpesa': { channel: 'MOBILE_MONEY_KE', currency: 'KES' },
  'payouts.merchant': { currency: 'KES', transaction_channel: 'bank', channel: 'bank' },
};
/** Operations whose Kenyan phone goes on the wire as 0XXXXXXXXX. */
const LOCAL_KENYAN_PHONE = ['collections.mpesa', 'collections.card', 'payouts.mpesa'];

/** The body the contract expects for a valid request sent with idempotency key `key`. */
function expectedBody(
  operation: string,
  request: Record<string, unknown>,
  key: string,
): Record<string, unknown> {
  const expected: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(request))
    if (value !== undefined) expected[snakeCase(field)] = value;
  if (expected.wallet_type !== 'USD') delete expected.wallet_type;
  if (LOCAL_KENYAN_PHONE.includes(operation)) {
    expected.phone_number = String(expected.phone_number).replace(/^\+254/, '0');
  }
  if (operation === 'payouts.panAfrican') expected.channel = expected.transaction_channel;
  expected.callback_url = `${String(expected.callback_url)}?malipo_key=${key}`;
  return { ...expected, ...CONSTANTS[operation] };
}

type Arbitraries = Record<string, fc.Arbitrary<unknown>>;

const text = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 100 })
  .filter((s) => s.length <= 255 && s.trim() !== '' && !REQUEST_RULES.textForbidden.test(s));
const kenyanPhone = fc.oneof(
  fc.stringMatching(/^0[1-9]\d{8}$/),
  fc.stringMatching(/^\+254[1-9]\d{8}$/),
);
const internationalPhone = fc.stringMatching(/^\+[1-9]\d{6,14}$/);
const url = fc
  .tuple(
    fc.constantFrom('http', 'https'),
    fc.domain(),
    fc.array(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { maxLength: 3 }),
  )
  .map(([scheme, host, path]) => `${scheme}://${host}/${path.join('/')}`);
const currency = fc.constantFrom(
  'KES',
  'GHS',
  'NGN',
  'UGX',
  'TZS',
  'ZAR',
  'USD',
  'XOF',
  'RWF',
  'EGP',
);
const accountType = fc.constantFrom('bank', 'phone');
const wallet = fc.option(fc.constantFrom('local', 'USD'), { nil: undefined });
/** Amounts from `min` to `max` with at most 2 decimals, as KES amounts are. */
const cents = (min: number, max: number) =>
  fc.integer({ min: min * 100, max: max * 100 }).map((units) => units / 100);
const positive = cents(0.01, 1e9);

const VALID: Record<string, Arbitraries> = {
  'collections.mpesa': {
    username: text,
    amount: cents(10, 250_000),
    phoneNumber: kenyanPhone,
    narration: text,
    callbackUrl: url,
  },
  'collections.card': {
    username: text,
    amount: cents(100, 1e9),
    phoneNumber: kenyanPhone,
    narration: text,
    callbackUrl: url,
  },
  'collections.panAfrican': {
    username: text,
    accountName: accountType,
    amount: positive,
    phoneNumber: internationalPhone,
    accountNumber: text,
    networkCode: text,
    channelId: text,
    narration: text,
    currency,
    callbackUrl: url,
    transactionChannel: accountType,
    redirectUrl: fc.option(url, { nil: undefined }),
  },
  'payouts.mpesa': {
    phoneNumber: kenyanPhone,
    amount: fc.integer({ min: 10, max: 250_000 }),
    narration: text,
    callbackUrl: url,
    walletType: wallet,
  },
  'payouts.panAfrican': {
    username: text,
    networkCode: text,
    accountName: accountType,
    accountHolderName: text,
    accountNumber: text,
    amount: positive,
    phoneNumber: internationalPhone,
    channelId: text,
    narration: text,
    currency,
    callbackUrl: url,
    transactionChannel: accountType,
    providerName: text,
    providerCode: text,
    walletType: wallet,
  },
  'payouts.merchant': {
    username: text,
    amount: positive,
    phoneNumber: fc.stringMatching(/^\+254[1-9]\d{8}$/),
    narration: text,
    businessAccount: fc.stringMatching(/^\d{1,10}$/),
    businessNumber: text,
    callbackUrl: url,
    walletType: wallet,
  },
};

const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const hugeString = fc.string({ minLength: 256, maxLength: 5000 }).map((s) => s.padEnd(256, 'x'));
const invalidText = fc.oneof(
  fc.constant(''),
  hugeString,
  notAString,
  fc.constantFrom('Order\u0000 42', 'Order\r\nX-Injected: 1', 'Refund \u202egnp.exe', ' \t\u3000'),
);
/**
 * Whether `value` is a binary artefact of a cent amount within `[min, max]` (250000.00000000003):
 * the limits take it as that decimal, so it is no invalid amount.
 */
const standsForCentsWithin = (value: number, min: number, max = Infinity) => {
  const cents = Math.round(value * 100) / 100;
  return hasAtMostDecimals(value, 2) && cents >= min && cents <= max;
};
/** Non-numbers, NaN, infinities, and numbers outside `[min, max]` (or not above 0 when `min` is 0). */
const invalidAmount = (min: number, max?: number) =>
  fc.oneof(
    fc.string(),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
    min === 0
      ? fc.double({ max: 0, noNaN: true })
      : fc
          .double({ max: min, maxExcluded: true, noNaN: true })
          .filter((value) => !standsForCentsWithin(value, min, max)),
    ...(max === undefined
      ? []
      : [
          fc
            .double({ min: max, minExcluded: true, noNaN: true })
            .filter((value) => !standsForCentsWithin(value, min, max)),
        ]),
    fc.boolean(),
    fc.constant(null),
    // In range, with more decimals than any currency has.
    fc.constant(100.123456789),
  );
const invalidPhone = (pattern: RegExp) =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !pattern.test(s)),
    notAString,
  );
const invalidUrl = fc.oneof(
  fc.string({ maxLength: 40 }).filter((s) => s !== '' && !/^https?:\/\//i.test(s)),
  fc.constantFrom(
    'javascript:alert(1)',
    'ftp://files.example.com/x',
    'http://',
    `https://a.example.com/${'x'.repeat(3000)}`,
  ),
  fc.integer(),
);
const invalidEnum = (allowed: string[]) =>
  fc.oneof(
    fc.string({ maxLength: 12 }).filter((s) => !allowed.includes(s)),
    fc.integer(),
  );
const invalidCurrency = fc.oneof(
  fc.string({ maxLength: 6 }).filter((s) => !/^[A-Z]{3}$/.test(s)),
  fc.constantFrom('kes', 'XYZ', 'EURO'),
);

function invalidFor(operation: string, field: string): fc.Arbitrary<unknown> {
  switch (field) {
    case 'amount':
      return operation.endsWith('.mpesa')
        ? invalidAmount(10, 250_000)
        : operation === 'collections.card'
          ? invalidAmount(100)
          : invalidAmount(0);
    case 'phoneNumber':
      return invalidPhone(
        operation === 'payouts.merchant'
          ? /^\+254[1-9]\d{8}$/
          : operation.endsWith('panAfrican')
            ? /^\+[1-9]\d{6,14}$/
            : /^(?:0[1-9]\d{8}|\+254[1-9]\d{8})$/,
      );
    case 'callbackUrl':
    case 'redirectUrl':
      return invalidUrl;
    case 'accountName':
    case 'transactionChannel':
      return invalidEnum(['bank', 'phone']);
    case 'walletType':
      return invalidEnum(['local', 'USD', '']);
    case 'currency':
      return invalidCurrency;
    case 'businessAccount':
      return fc.oneof(
        invalidText,
        fc.stringMatching(/^\d*[a-zA-Z ]+\d*$/).filter((s) => s.length > 0 && s.length < 255),
      );
    default:
      return invalidText;
  }
}

const POLLUTING_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'isAdmin',
];

describe('request validation properties (fast-check)', () => {
  let server: RecordingServer;
  let client: PaymentsClient;

  beforeAll(async () => {
    server = await RecordingServer.start();
    server.fallback = () => ({
      status: 200,
      body: {
        success: true,
        status: 'PENDING',
        transaction_reference: 'TX',
        checkout_url: 'https://pay.example.com/c',
      },
    });
    client = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'p',
      baseUrl: server.url,
      maxRetries: 0,
    });
  });
  afterAll(() => server.close());

  describe.each(OPERATION_CASES.map((c) => [c.operation, c] as const))(
    '%s',
    (operation, testCase: OperationCase) => {
      const validRequest = fc.record(VALID[operation], {
        requiredKeys: Object.keys(VALID[operation]).filter(
          (k) => k !== 'redirectUrl' && k !== 'walletType',
        ),
      });

      it('sends the exact wire body of the contract for any valid request', async () => {
        await fc.assert(
          fc.asyncProperty(validRequest, async (request) => {
            server.requests.length = 0;
            await callOperation(client, testCase, request);

            expect(server.requests).toHaveLength(1);
            const key = server.requests[0].headers['idempotency-key'] as string;
            expect(server.requests[0].json).toStrictEqual(expectedBody(operation, request, key));
          }),
          { numRuns: 60 },
        );
      });

      it('rejects any request with one invalid field, naming it, and sends nothing', async () => {
        const fields = Object.keys(VALID[operation]);
        const corrupted = fc
          .constantFrom(...fields)
          .chain((field) =>
            fc.tuple(
              fc.constant(field),
              invalidFor(operation, field),
              fc.constantFrom(...[testCase.request]),
            ),
          );
        await fc.assert(
          fc.asyncProperty(corrupted, async ([field, value, base]) => {
            server.requests.length = 0;
            const request = { ...base, [field]: value };

            const error: unknown = await callOperation(client, testCase, request).catch(
              (e: unknown) => e,
            );

            expect(error).toBeInstanceOf(PaymentsValidationError);
            expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain(field);
            expect(server.requests).toHaveLength(0);
          }),
          { numRuns: 150 },
        );
      });

      it('rejects prototype-pollution and unknown keys, and pollutes nothing', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...POLLUTING_KEYS),
            fc.jsonValue(),
            async (key, value) => {
              server.requests.length = 0;
              const hostile = JSON.parse(
                `{${JSON.stringify(key)}: ${JSON.stringify(value ?? null)}}`,
              ) as object;
              const request = Object.assign(Object.create(null) as object, testCase.request);
              Object.defineProperty(request, key, {
                value: (hostile as Record<string, unknown>)[key],
                enumerable: true,
              });

              const error: unknown = await callOperation(client, testCase, request).catch(
                (e: unknown) => e,
              );

              expect(error).toBeInstanceOf(PaymentsValidationError);
              expect((error as PaymentsValidationError).errors).toContainEqual(
                expect.objectContaining({ field: key, rule: 'whitelist' }),
              );
              expect(server.requests).toHaveLength(0);
              expect(({} as Record<string, unknown>).polluted).toBeUndefined();
              expect(Object.prototype).not.toHaveProperty('isAdmin');
            },
          ),
          { numRuns: 60 },
        );
      });
    },
  );
});
