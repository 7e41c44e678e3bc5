import type { OperationCase } from '../spec-support/operation-cases';
import { callOperation, OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';
import { PaymentsValidationError } from './errors';
import type { PaymentsClient } from './payments-client';

type Rule = [
  label: string,
  patch: Record<string, unknown>,
  field: string,
  rule: string,
  /** Rules the same value also breaks, of the same standing (too long and not digits). */
  alsoBreaks?: readonly string[],
];

const byOperation = (name: string) =>
  OPERATION_CASES.find((c) => c.operation === name) as OperationCase;

const KENYAN_PHONES: Rule[] = [
  [
    'phone without leading 0 or +254',
    { phoneNumber: '712345678' },
    'phoneNumber',
    'isKenyanPhoneNumber',
  ],
  [
    'phone with 9 digits after 0',
    { phoneNumber: '071234567' },
    'phoneNumber',
    'isKenyanPhoneNumber',
  ],
  [
    'phone of another country',
    { phoneNumber: '+255712345678' },
    'phoneNumber',
    'isKenyanPhoneNumber',
  ],
  ['phone with spaces', { phoneNumber: '0712 345 678' }, 'phoneNumber', 'isKenyanPhoneNumber'],
  [
    'phone dialled out with 00',
    { phoneNumber: '0012345678' },
    'phoneNumber',
    'isKenyanPhoneNumber',
  ],
  [
    'phone with a 0 after +254',
    { phoneNumber: '+254012345678' },
    'phoneNumber',
    'isKenyanPhoneNumber',
  ],
  ['phone as a number', { phoneNumber: 712345678 }, 'phoneNumber', 'isString'],
  [
    'phone as a String object',
    { phoneNumber: new String('0712345678') },
    'phoneNumber',
    'isString',
  ],
];
/** `digitsOnly`: a field that must also be digits, which text that is too long or blank is not. */
const TEXT = (field: string, digitsOnly = false): Rule[] => [
  [`missing ${field}`, { [field]: undefined }, field, 'isNotEmpty'],
  [`empty ${field}`, { [field]: '' }, field, 'isNotEmpty'],
  [`${field} not a string`, { [field]: 42 }, field, 'isString'],
  [`${field} a String object`, { [field]: new String('text') }, field, 'isString'],
  [
    `${field} over 255 characters`,
    { [field]: 'x'.repeat(256) },
    field,
    'maxLength',
    digitsOnly ? ['matches'] : [],
  ],
  [
    `${field} of 256 code points, half variation selectors`,
    { [field]: '❤️'.repeat(128) },
    field,
    'maxLength',
    digitsOnly ? ['matches'] : [],
  ],
  [
    `${field} only whitespace`,
    { [field]: ' \t\u00a0 ' },
    field,
    'isNotBlank',
    digitsOnly ? ['matches'] : [],
  ],
];
const AMOUNT_TYPES: Rule[] = [
  ['amount as a string', { amount: '1500' }, 'amount', 'isNumber'],
  ['amount NaN', { amount: Number.NaN }, 'amount', 'isNumber'],
  ['amount Infinity', { amount: Number.POSITIVE_INFINITY }, 'amount', 'isNumber'],
  ['amount missing', { amount: undefined }, 'amount', 'isNumber'],
];
const CALLBACK: Rule[] = [
  ['callbackUrl not a URL', { callbackUrl: 'not a url' }, 'callbackUrl', 'isUrl'],
  ['callbackUrl with ftp', { callbackUrl: 'ftp://example.com/hook' }, 'callbackUrl', 'isUrl'],
  ['callbackUrl without scheme', { callbackUrl: 'example.com/hook' }, 'callbackUrl', 'isUrl'],
];
const INTERNATIONAL_PHONES: Rule[] = [
  ['phone without +', { phoneNumber: '233241234567' }, 'phoneNumber', 'isInternationalPhoneNumber'],
  [
    'phone with letters',
    { phoneNumber: '+23324abc567' },
    'phoneNumber',
    'isInternationalPhoneNumber',
  ],
  ['phone too short', { phoneNumber: '+12345' }, 'phoneNumber', 'isInternationalPhoneNumber'],
];
const PAN_AFRICAN_COMMON: Rule[] = [
  ['accountName not bank/phone', { accountName: 'wallet' }, 'accountName', 'isIn'],
  [
    'transactionChannel not bank/phone',
    { transactionChannel: 'card' },
    'transactionChannel',
    'isIn',
  ],
  ['amount zero', { amount: 0 }, 'amount', 'isPositive'],
  ['amount negative', { amount: -5 }, 'amount', 'isPositive'],
  ['currency not ISO 4217', { currency: 'XYZ' }, 'currency', 'isISO4217CurrencyCode'],
  ['currency lowercase', { currency: 'ghs' }, 'currency', 'isISO4217CurrencyCode'],
  ...INTERNATIONAL_PHONES,
  ...AMOUNT_TYPES,
  ...CALLBACK,
  ...TEXT('narration'),
  ...TEXT('accountNumber'),
  ...TEXT('networkCode'),
  ...TEXT('channelId'),
];
const WALLET: Rule[] = [['walletType not local/USD', { walletType: 'EUR' }, 'walletType', 'isIn']];

const RULES: Record<string, Rule[]> = {
  'collections.mpesa': [
    ['amount below 10', { amount: 9 }, 'amount', 'min'],
    ['amount above 250,000', { amount: 250_001 }, 'amount', 'max'],
    ...AMOUNT_TYPES,
    ...KENYAN_PHONES,
    ...CALLBACK,
    ...TEXT('narration'),
  ],
  'collections.card': [
    ['amount below 100', { amount: 99 }, 'amount', 'min'],
    ...AMOUNT_TYPES,
    ...KENYAN_PHONES,
    ...CALLBACK,
    ...TEXT('narration'),
  ],
  'collections.panAfrican': [
    ...PAN_AFRICAN_COMMON,
    ['redirectUrl not a URL', { redirectUrl: 'javascript:alert(1)' }, 'redirectUrl', 'isUrl'],
  ],
  'payouts.mpesa': [
    ['amount below 10', { amount: 9.99 }, 'amount', 'min'],
    ['amount above 250,000', { amount: 300_000 }, 'amount', 'max'],
    ...AMOUNT_TYPES,
    ...KENYAN_PHONES,
    ...CALLBACK,
    ...TEXT('narration'),
    ...WALLET,
    ['a username field', { username: 'acme' }, 'username', 'whitelist'],
  ],
  'payouts.panAfrican': [
    ...PAN_AFRICAN_COMMON,
    ...TEXT('accountHolderName'),
    ...TEXT('providerName'),
    ...TEXT('providerCode'),
    ...WALLET,
  ],
  'payouts.merchant': [
    ['amount zero', { amount: 0 }, 'amount', 'isPositive'],
    [
      'phone in 07 form',
      { phoneNumber: '0712345678' },
      'phoneNumber',
      'isKenyanInternationalPhoneNumber',
    ],
    [
      'phone of another country',
      { phoneNumber: '+255712345678' },
      'phoneNumber',
      'isKenyanInternationalPhoneNumber',
    ],
    [
      'phone with a 0 after +254',
      { phoneNumber: '+254012345678' },
      'phoneNumber',
      'isKenyanInternationalPhoneNumber',
    ],
    ['businessAccount with letters', { businessAccount: '88A880' }, 'businessAccount', 'matches'],
    [
      'businessAccount over 32 digits',
      { businessAccount: '1'.repeat(33) },
      'businessAccount',
      'matches',
    ],
    ...AMOUNT_TYPES,
    ...CALLBACK,
    ...TEXT('narration'),
    ...TEXT('businessAccount', true),
    ...TEXT('businessNumber'),
    ...WALLET,
  ],
};

describe('request validation (nothing is sent)', () => {
  let server: RecordingServer;
  let client: PaymentsClient;

  beforeAll(async () => {
    server = await RecordingServer.start();
    client = createPaymentsClient({ apiUsername: 'u', apiPassword: 'p', baseUrl: server.url });
  });
  afterEach(() => {
    const sent = server.requests.length;
    server.reset();
    expect(sent).toBe(0);
  });
  afterAll(() => server.close());

  async function rejection(
    testCase: OperationCase,
    request: unknown,
  ): Promise<PaymentsValidationError> {
    const error: unknown = await callOperation(client, testCase, request).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PaymentsValidationError);
    return error as PaymentsValidationError;
  }

  describe.each(Object.keys(RULES))('%s', (operation) => {
    const testCase = byOperation(operation);

    it.each(RULES[operation])('rejects %s', async (_label, patch, field, rule, alsoBreaks = []) => {
      const error = await rejection(testCase, { ...testCase.request, ...patch });

      // One rule per wrong value: a missing amount is not also below the minimum.
      expect(error.errors.filter((e) => e.field === field).map((e) => e.rule)).toEqual([
        rule,
        ...alsoBreaks,
      ]);
      expect(error.message).toContain(field);
      expect(error.target).toBe(
        {
          collections: {
            mpesa: 'MpesaCollectionRequest',
            card: 'CardCollectionRequest',
            panAfrican: 'PanAfricanCollectionRequest',
          },
          payouts: {
            mpesa: 'MpesaPayoutRequest',
            panAfrican: 'PanAfricanPayoutRequest',
            merchant: 'MerchantPayoutRequest',
          },
        }[testCase.service][testCase.method as 'mpesa'],
      );
    });

    it('rejects an unknown field, naming it', async () => {
      const error = await rejection(testCase, {
        ...testCase.request,
        callbackURL: 'https://x.example',
      });

      expect(error.errors).toContainEqual({
        field: 'callbackURL',
        rule: 'whitelist',
        message: expect.stringContaining('callbackURL is not a field') as string,
      });
    });

    it('rejects a __proto__ key without touching prototypes', async () => {
      const hostile = JSON.parse(
        `{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}`,
      ) as object;
      const error = await rejection(testCase, { ...testCase.request, ...hostile });

      expect(error.errors.map((e) => e.field)).toEqual(
        expect.arrayContaining(['__proto__', 'constructor']),
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it.each([null, undefined, 'a string', 42, []])('rejects %p as the request', async (input) => {
      const error = await rejection(testCase, input);
      expect(error.errors).toEqual([
        { field: 'request', rule: 'isObject', message: 'request must be an object' },
      ]);
    });

    it('rejects an empty callbackUrl when no defaultCallbackUrl is configured', async () => {
      const error = await rejection(testCase, { ...testCase.request, callbackUrl: '' });

      expect(error.errors).toContainEqual({
        field: 'callbackUrl',
        rule: 'isNotEmpty',
        message:
          'callbackUrl is required: the request has none and defaultCallbackUrl is not configured',
      });
    });

    if ('username' in testCase.request) {
      it('rejects an empty username when no defaultUsername is configured', async () => {
        const error = await rejection(testCase, { ...testCase.request, username: '' });
        expect(error.errors).toContainEqual(
          expect.objectContaining({ field: 'username', rule: 'isNotEmpty' }),
        );
      });
    }

    it('reports every failed field at once and never the rejected values', async () => {
      const error = await rejection(testCase, {
        ...testCase.request,
        amount: -123456789,
        phoneNumber: 'SECRET-PHONE-VALUE',
        narration: '',
      });

      expect(new Set(error.errors.map((e) => e.field))).toEqual(
        new Set(['amount', 'phoneNumber', 'narration']),
      );
      expect(error.message).not.toContain('SECRET-PHONE-VALUE');
      expect(error.message).not.toContain('123456789');
    });

    it('does not modify the caller object', async () => {
      const request = { ...testCase.request, callbackUrl: '' };
      await rejection(testCase, request);
      expect(request.callbackUrl).toBe('');
    });
  });

  it('reads fields defined by a class (getters, inherited values)', async () => {
    server.fallback = () => ({
      status: 200,
      body: { success: true, transaction_reference: 'TX-G', status: 'QUEUED' },
    });
    class Payout {
      get phoneNumber() {
        return '0712345678';
      }
      get amount() {
        return 500;
      }
      get narration() {
        return 'from getters';
      }
      get callbackUrl() {
        return 'https://shop.example.com/hooks';
      }
    }
    const inherited = Object.assign(Object.create({ walletType: 'USD' }) as object, {
      ...OPERATION_CASES[3].request,
    });
    await client.payouts.mpesa(new Payout());
    await client.payouts.mpesa(inherited);

    expect(server.requests.map((r) => r.json)).toEqual([
      expect.objectContaining({
        amount: 500,
        narration: 'from getters',
        callback_url: expect.stringMatching(/^https:\/\/shop\.example\.com\/hooks\?malipo_key=/),
      }),
      expect.objectContaining({ wallet_type: 'USD' }),
    ]);
    server.reset();
  });

  it('rejects a malformed idempotency key', async () => {
    const testCase = byOperation('payouts.mpesa');
    const error: unknown = await callOperation(client, testCase, testCase.request, {
      idempotencyKey: 'has space\r\nX-Injected: 1',
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect((error as PaymentsValidationError).errors[0]).toMatchObject({
      field: 'idempotencyKey',
      rule: 'isIdempotencyKey',
    });
  });

  it.each<[string, unknown, string, string]>([
    ['a misspelt idempotencyKey', { idempotencykey: 'refund-42' }, 'idempotencykey', 'whitelist'],
    [
      'a misspelt retryAmbiguous beside a known option',
      { idempotencyKey: 'refund-43', retryAmbigous: false },
      'retryAmbigous',
      'whitelist',
    ],
    ['the key given as the options', 'refund-44', 'options', 'isObject'],
    ['a list as the options', ['refund-45'], 'options', 'isObject'],
    ['resend that is not a boolean', { resend: 'yes' }, 'resend', 'isBoolean'],
  ])(
    'refuses call options with %s, naming the field, and sends nothing',
    async (_, options, field, rule) => {
      for (const testCase of [byOperation('payouts.mpesa'), byOperation('collections.mpesa')]) {
        const error: unknown = await callOperation(
          client,
          testCase,
          testCase.request,
          options,
        ).catch((e: unknown) => e);

        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect((error as PaymentsValidationError).errors).toEqual([
          expect.objectContaining({ field, rule }),
        ]);
        expect((error as Error).message).toContain(field);
        // The call's options are at fault, not its request (which is valid).
        expect((error as PaymentsValidationError).target).toMatch(/^\w+Request call options$/);
        expect((error as Error).message).toMatch(/^Invalid \w+Request call options: /);
      }
    },
  );

  it('names every unknown call option at once, and sends nothing', async () => {
    const testCase = byOperation('payouts.mpesa');
    const error: unknown = await callOperation(client, testCase, testCase.request, {
      idempotencykey: 'refund-47',
      resned: true,
    }).catch((e: unknown) => e);

    expect((error as PaymentsValidationError).errors).toEqual([
      expect.objectContaining({ field: 'idempotencykey', rule: 'whitelist' }),
      expect.objectContaining({ field: 'resned', rule: 'whitelist' }),
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('takes call options of every known name, and an options object with none', async () => {
    const testCase = byOperation('payouts.mpesa');
    server.reply({ status: 200, body: successBody('payout') });
    await callOperation(client, testCase, testCase.request, {
      idempotencyKey: 'refund-46',
      retryAmbiguous: false,
      resend: false,
    });
    server.reply({ status: 200, body: successBody('payout') });
    await callOperation(client, testCase, testCase.request, {});
    expect(server.requests.map((request) => request.headers['idempotency-key'])).toEqual([
      'refund-46',
      expect.any(String),
    ]);
    server.reset();
  });

  it('compares the limits with the decimal a sum stands for, not its binary artefact', async () => {
    const request = byOperation('collections.mpesa').request;
    server.fallback = () => ({
      status: 200,
      body: { success: true, transaction_reference: 'TX-C' },
    });
    await client.collections.mpesa({ ...request, amount: 0.01 + 8.04 + 1.95 });
    await client.collections.mpesa({ ...request, amount: 250_000.00000000003 });
    const below = await client.collections
      .mpesa({ ...request, amount: 9.99 })
      .catch((error: unknown) => error);

    expect(server.requests).toHaveLength(2);
    expect(below).toBeInstanceOf(PaymentsValidationError);
    expect((below as PaymentsValidationError).errors).toEqual([
      expect.objectContaining({ field: 'amount', rule: 'min' }),
    ]);
    server.reset();
  });

  it('accepts the boundary amounts of each limit', async () => {
    server.fallback = () => ({
      status: 200,
      body: {
        success: true,
        transaction_reference: 'TX-B',
        checkout_url: 'https://pay.example.com/x',
      },
    });
    await client.collections.mpesa({ ...OPERATION_CASES[0].request, amount: 10 });
    await client.collections.mpesa({
      ...byOperation('collections.mpesa').request,
      amount: 250_000,
    });
    await client.collections.card({ ...OPERATION_CASES[1].request, amount: 100 });
    await client.payouts.merchant({ ...OPERATION_CASES[5].request, amount: 0.01 });
    await client.payouts.merchant({
      ...OPERATION_CASES[5].request,
      businessAccount: '9'.repeat(32),
      narration: '😀'.repeat(255),
    });
    // 1,022 code points (2,022 UTF-16 units), its malipo_key appended: within 2,048 characters.
    await client.collections.mpesa(
      { ...OPERATION_CASES[0].request, callbackUrl: `https://m.example.com/${'😀'.repeat(1_000)}` },
      { idempotencyKey: 'k'.repeat(36) },
    );
    expect(server.requests.map((r) => (r.json as { amount: number }).amount)).toEqual([
      10,
      250_000,
      100,
      0.01,
      OPERATION_CASES[5].request.amount,
      OPERATION_CASES[0].request.amount,
    ]);
    server.reset();
  });
});
