import { IsEmail, validateSync } from 'class-validator';
import fc from 'fast-check';
import type { PaymentsFieldError } from './errors';
import { OPERATIONS } from './operations';
import { PaymentsValidationError } from './errors';
import type { PaymentsDefaults } from './payments-options.interface';
import {
  checkRequest,
  prepareRequest,
  prepareRequestByTables,
  REQUEST_RULES,
} from './request-rules';

/** What class-validator's `validateSync` reports for `values`, in the shape of our errors. */
function classValidatorErrors(
  requestClass: new () => object,
  values: Record<string, unknown>,
): PaymentsFieldError[] {
  const instance = Object.assign(new requestClass(), values);
  return validateSync(instance, {
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  }).flatMap((error) =>
    Object.entries(error.constraints ?? {}).map(([rule, message]) => ({
      field: error.property,
      rule,
      message,
    })),
  );
}

function precompiledErrors(
  requestClass: new () => object,
  values: Record<string, unknown>,
): PaymentsFieldError[] {
  const errors: PaymentsFieldError[] = [];
  checkRequest(requestClass, values, errors);
  return errors;
}

const long = (length: number, unit = 'a') => unit.repeat(length);
const { maxTextLength, maxUrlLength } = REQUEST_RULES;

/** Values chosen at every edge of the rules, then arbitrary ones of every JSON and JS type. */
const edgeValue = fc.constantFrom<unknown>(
  undefined,
  null,
  '',
  ' ',
  '\t',
  0,
  -0,
  -1,
  9.99,
  10,
  99.99,
  100,
  250_000,
  250_000.01,
  1e21,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  '1500',
  true,
  false,
  {},
  [],
  ['0712345678'],
  { toString: () => '0712345678' },
  new String('0712345678'),
  new String(''),
  '0712345678',
  '+254712345678',
  '254712345678',
  '07123456789',
  '+2348031234567',
  '+0123456789',
  '+12345',
  '+1234567890123456',
  'KES',
  'kes',
  'XXX',
  'USD',
  'local',
  'LOCAL',
  'bank',
  'phone',
  'receipt',
  'withdrawal',
  '+234',
  '+23456',
  '123456',
  '12a456',
  'https://shop.example.com/webhooks/payments',
  'http://localhost:3000/cb',
  'http://127.0.0.1/cb',
  'https://user:pass@shop.example.com/cb',
  'ftp://shop.example.com/cb',
  'javascript:alert(1)',
  'shop.example.com/cb',
  `https://shop.example.com/${long(maxUrlLength - 25)}`,
  `https://shop.example.com/${long(maxUrlLength)}`,
  long(maxTextLength),
  long(maxTextLength + 1),
  long(maxTextLength, '😀'),
  long(maxTextLength + 1, '😀'),
  long(maxTextLength, 'a\uFE0F'),
  'ref-123',
  '.',
  '..',
  'a/b',
  'a\\b',
  'a?b',
  'a#b',
  'a..b',
  'Order 42',
  '\u0000',
  '\uD800',
  'ü',
);
const anyValue = fc.oneof(
  { weight: 6, arbitrary: edgeValue },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.stringMatching(/^\+?\d{1,16}$/) },
  { weight: 1, arbitrary: fc.webUrl() },
  { weight: 1, arbitrary: fc.anything() },
);

const OPERATION_ROWS = Object.values(OPERATIONS);

describe('precompiled request checks', () => {
  it('cover every request class of the operations table', () => {
    expect(OPERATION_ROWS.length).toBeGreaterThanOrEqual(10);
    for (const { requestClass } of OPERATION_ROWS) {
      expect(() => precompiledErrors(requestClass, {})).not.toThrow();
    }
  });

  it.each(OPERATION_ROWS.map((row) => [row.name, row] as const))(
    '%s: accept and reject exactly as class-validator does, with the same fields, rules and messages',
    (_name, { requestClass, requestFields }) => {
      const request = fc.record(
        Object.fromEntries(requestFields.map((field) => [field, anyValue])),
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(request, (values) => {
          expect(precompiledErrors(requestClass, values)).toEqual(
            classValidatorErrors(requestClass, values),
          );
        }),
        { numRuns: 2_000 },
      );
    },
  );

  it('refuses a callback URL that URL cannot parse, though isURL takes it', () => {
    const { requestClass } = OPERATIONS.payoutsMpesa;
    const rules = (callbackUrl: string) =>
      precompiledErrors(requestClass, { callbackUrl }).map((error) => error.rule);

    expect(rules('http://xn--a.com/cb?x=%20')).toContain('isUrl');
    expect(rules('https://shop.example.com/cb?x=%20')).not.toContain('isUrl');
  });

  it('answer for a repeated callback URL exactly as for a new one (the last-URL memo)', () => {
    const { requestClass } = OPERATIONS.payoutsMpesa;
    const urlRules = (callbackUrl: unknown) =>
      precompiledErrors(requestClass, { callbackUrl }).map((error) => error.rule);
    const sequence = [
      'https://shop.example.com/cb',
      'https://shop.example.com/cb',
      'ftp://shop.example.com/cb',
      'ftp://shop.example.com/cb',
      'https://shop.example.com/cb',
      `https://shop.example.com/${'a'.repeat(REQUEST_RULES.maxUrlLength)}`,
      'https://shop.example.com/cb',
    ];
    const fresh = sequence.map((url) => classValidatorErrors(requestClass, { callbackUrl: url }));
    expect(sequence.map(urlRules)).toEqual(fresh.map((errors) => errors.map((e) => e.rule)));
    expect(sequence.map(urlRules).map((rules) => rules.includes('isUrl'))).toEqual([
      false,
      false,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('refuse to compile a class with a class-validator rule they do not know', () => {
    class Unknown {
      @IsEmail()
      email!: string;
    }
    expect(() => precompiledErrors(Unknown, { email: 'x' })).toThrow(
      /Unknown has 1 class-validator rules but 0 declared/,
    );
  });
});

/** The outcome of a preparation: the request with its prototype and key order, or the errors. */
function outcome(prepare: () => object): unknown {
  try {
    const request = prepare();
    return {
      prototype: Object.getPrototypeOf(request) as unknown,
      keys: Object.keys(request),
      request: { ...request },
    };
  } catch (error: unknown) {
    if (!(error instanceof PaymentsValidationError)) throw error;
    return { target: error.target, errors: error.errors };
  }
}

/** The same values as a plain object, inherited from one, on a null prototype, or as getters. */
type InputForm = 'plain' | 'inherited' | 'nullPrototype' | 'getters' | 'inheritedGetters';
function inputOf(values: Record<string, unknown>, form: InputForm): Record<string, unknown> {
  const getters = () => {
    const target = {};
    for (const [key, value] of Object.entries(values)) {
      Object.defineProperty(target, key, { get: () => value, enumerable: true });
    }
    return target;
  };
  switch (form) {
    case 'plain':
      return { ...values };
    case 'inherited':
      return Object.create(values) as Record<string, unknown>;
    case 'nullPrototype':
      return Object.assign(Object.create(null) as Record<string, unknown>, values);
    case 'getters':
      return getters();
    case 'inheritedGetters':
      return Object.create(getters()) as Record<string, unknown>;
  }
}

describe('generated request preparation (generated-function.ts)', () => {
  const defaults = fc.record<PaymentsDefaults>(
    {
      username: fc.option(fc.constantFrom('acme', ''), { nil: undefined }),
      callbackUrl: fc.option(fc.constantFrom('https://shop.example.com/cb', ''), {
        nil: undefined,
      }),
      walletType: fc.constantFrom('local', 'USD'),
    },
    { requiredKeys: ['walletType'] },
  );
  const strayKey = fc.constantFrom('__proto__', 'constructor', 'toString', 'isAdmin', 'extra');
  const form = fc.constantFrom<InputForm>(
    'plain',
    'inherited',
    'nullPrototype',
    'getters',
    'inheritedGetters',
  );
  const rows = OPERATION_ROWS as Parameters<typeof prepareRequest>[0][];
  const allFields = [...new Set(rows.flatMap((row) => row.requestFields))];
  /** Fields set on Object.prototype during one check: read by neither preparation. */
  const pollution = fc.dictionary(fc.constantFrom(...allFields), anyValue, { maxKeys: 3 });

  it.each(rows.map((row) => [row.name, row] as const))(
    '%s: returns and throws exactly what the table-driven loop does',
    (_name, operation) => {
      const fields = fc.record(
        Object.fromEntries(operation.requestFields.map((field) => [field, anyValue])),
        { requiredKeys: [] },
      );
      const input = fc.tuple(fields, fc.option(fc.tuple(strayKey, anyValue), { nil: undefined }));
      fc.assert(
        fc.property(
          input,
          form,
          defaults,
          pollution,
          ([values, stray], shape, chosen, polluted) => {
            const request = inputOf(values, shape);
            if (stray) {
              Object.defineProperty(request, stray[0], { value: stray[1], enumerable: true });
            }
            const prototype = Object.prototype as Record<string, unknown>;
            let generated: unknown;
            let byTables: unknown;
            try {
              Object.assign(prototype, polluted);
              generated = outcome(() => prepareRequest(operation, request, chosen));
              byTables = outcome(() => prepareRequestByTables(operation, request, chosen));
            } finally {
              for (const key of Object.keys(polluted)) delete prototype[key];
            }
            expect(generated).toStrictEqual(byTables);
          },
        ),
        { numRuns: 1_000 },
      );
    },
  );
});
