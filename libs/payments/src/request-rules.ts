import { applyDecorators } from '@nestjs/common';
import { getMetadataStorage, IsOptional, ValidateBy, ValidateIf } from 'class-validator';
import isISO4217 from 'validator/lib/isISO4217';
import isURL from 'validator/lib/isURL';
import { randomUUID } from 'node:crypto';
import type { PaymentsFieldError } from './errors';
import { PaymentsValidationError } from './errors';
import type { PaymentsOperation } from './operations';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';
import { WALLET_TYPES } from './payments-options.interface';
import { generateFunction, literal, property, stepPerTable } from './generated-function';
import { asDecimal, hasAtMostDecimals } from './money';
import { isPathSegment, PATH_SEGMENT } from './path-segment';
import { objectOfKnownKeysProblems, unknownKeyProblem } from './unknown-keys';

/**
 * Every limit and format of the interface document (sections 2.5, 2.7, 8) in one table.
 * Text and URL lengths are ours: the document sets none, these bound hostile input.
 */
export const REQUEST_RULES = {
  // Decimals are ours: a KES amount has the currency's 2; an amount in the request's currency
  // at most 4, the most of any ISO 4217 minor unit (an amount the service cannot pay as given
  // would never match its webhook's).
  kesMobileMoneyAmount: { min: 10, max: 250_000, decimals: 2 },
  cardAmount: { min: 100, decimals: 2 },
  kesAmount: { positive: true, decimals: 2 },
  anyCurrencyAmount: { positive: true, decimals: 4 },
  /**
   * Control characters (a tab aside, as text pasted from a spreadsheet holds) and bidirectional
   * overrides: no text field of a payment carries them.
   */
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  textForbidden: /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/,
  // No Kenyan national number starts with 0: `0012345678` is the international prefix `00`, not
  // a Kenyan phone, and `+254012345678` would go out as one.
  kenyanPhone: {
    pattern: /^(?:0[1-9]\d{8}|\+254[1-9]\d{8})$/,
    description: 'a Kenyan phone number, 0XXXXXXXXX or +254XXXXXXXXX (the first X not 0)',
  },
  kenyanInternationalPhone: {
    pattern: /^\+254[1-9]\d{8}$/,
    description: 'a Kenyan phone number with country code, +254XXXXXXXXX (the first X not 0)',
  },
  internationalPhone: {
    pattern: /^\+[1-9]\d{6,14}$/,
    description: 'a phone number with country code, + and 7 to 15 digits',
  },
  accountTypes: ['bank', 'phone'] as const,
  networkTransactionTypes: ['receipt', 'withdrawal'] as const,
  dialCode: { pattern: /^\+\d{1,4}$/, description: 'a dial code, + and 1 to 4 digits' },
  pathSegment: PATH_SEGMENT,
  maxTextLength: 255,
  maxUrlLength: 2048,
  /** Paybill and Till numbers are a few digits; the wire contract allows up to 32. */
  maxBusinessAccountDigits: 32,
} as const;

/** Account and channel type of pan-African requests. */
export type AccountType = (typeof REQUEST_RULES.accountTypes)[number];

/**
 * One rule of one field: its name and message (`$property` stands for the field) as errors
 * report them, and the test. The class-validator decorators and the precompiled validation of
 * the call path both run these same tests, so `ValidationPipe` and the services agree.
 */
interface Check {
  readonly rule: string;
  readonly message: string;
  readonly test: (value: unknown) => boolean;
  /** What the field must be before any other check means anything (see {@link checked}). */
  readonly gate?: boolean;
}

/** When a field's checks are skipped: null/undefined (`Optional`), or empty (`FallsBackToDefault`). */
type Condition = 'unlessAbsent' | 'unlessEmpty';

interface FieldRules {
  conditions: Condition[];
  checks: Check[];
}

/** The checks of each class, by field in declaration order, as its decorators declared them. */
const CLASS_RULES = new Map<object, Map<string, FieldRules>>();

function fieldRules(target: object, field: string): FieldRules {
  const constructor = (target as { constructor: object }).constructor;
  let fields = CLASS_RULES.get(constructor);
  if (!fields) CLASS_RULES.set(constructor, (fields = new Map<string, FieldRules>()));
  let rules = fields.get(field);
  if (!rules) fields.set(field, (rules = { conditions: [], checks: [] }));
  return rules;
}

/**
 * A property decorator that registers `checks` with class-validator and for the call path. A
 * value that fails a `gate` check (a missing amount, a number given as text) is reported by the
 * first gate it fails alone: every check after it passes such a value, so the error names what is
 * wrong rather than every limit the value cannot be held to.
 */
function checked(...given: Check[]): PropertyDecorator {
  const gates: Check[] = [];
  const checks = given.map((check): Check => {
    const before = [...gates];
    if (check.gate) gates.push(check);
    if (before.length === 0) return check;
    // A loop rather than `every`, whose callback would be a closure allocated per value.
    const passesGates = (v: unknown): boolean => {
      for (const gate of before) if (!gate.test(v)) return false;
      return true;
    };
    return { ...check, test: (v) => !passesGates(v) || check.test(v) };
  });
  return (target, key) => {
    for (const check of checks) {
      ValidateBy({
        name: check.rule,
        validator: { validate: check.test, defaultMessage: () => check.message },
      })(target, key);
      fieldRules(target, String(key)).checks.push(check);
    }
  };
}

const isString = (v: unknown): v is string => typeof v === 'string';

const IS_STRING: Check = {
  rule: 'isString',
  message: '$property must be a string',
  test: isString,
  gate: true,
};
const IS_NOT_EMPTY: Check = {
  rule: 'isNotEmpty',
  message: '$property must not be empty',
  test: (v) => v !== '' && v !== null && v !== undefined,
  gate: true,
};
/**
 * Whether `value` has at most `max` characters, counted as code points (docs/wire-contract.md): a
 * surrogate pair is one, a variation selector (U+FE0F) one more. Longer than `2 * max` UTF-16
 * units is always more, so a huge string is never walked.
 * @internal
 */
export function hasAtMostCodePoints(value: string, max: number): boolean {
  if (value.length <= max) return true;
  if (value.length > 2 * max) return false;
  let count = 0;
  for (const _ of value) if (++count > max) return false;
  return true;
}

function maxLength(max: number): Check {
  return {
    rule: 'maxLength',
    message: `$property must be at most ${max} characters`,
    test: (v) => typeof v === 'string' && hasAtMostCodePoints(v, max),
  };
}
function matches(rule: string, pattern: RegExp, message: string): Check {
  return { rule, message, test: (v) => typeof v === 'string' && pattern.test(v) };
}
function isOneOf(values: readonly unknown[], message: string): Check {
  return { rule: 'isIn', message, test: (v) => values.includes(v) };
}
const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * A finite number within `[min, max]` with at most `decimals` decimals, with rule names
 * `isNumber`, `isPositive`, `min`, `max` and `decimals`.
 */
export function IsAmount(limits: {
  min?: number;
  max?: number;
  positive?: boolean;
  decimals?: number;
}) {
  const checks: Check[] = [
    { rule: 'isNumber', message: '$property must be a number', test: isAmount, gate: true },
  ];
  if (limits.positive) {
    checks.push({
      rule: 'isPositive',
      message: '$property must be greater than 0',
      test: (v) => isAmount(v) && v > 0,
    });
  }
  const { min, max, decimals } = limits;
  // The limits are compared with the decimal an amount stands for: a sum's binary artefact
  // (0.01 + 8.04 + 1.95 is 9.999999999999998) is 10.00, which `decimals` then accepts.
  const decimal = (v: number) => (decimals === undefined ? v : asDecimal(v, decimals));
  if (min !== undefined) {
    checks.push({
      rule: 'min',
      message: `$property must be at least ${min}`,
      test: (v) => isAmount(v) && decimal(v) >= min,
    });
  }
  if (max !== undefined) {
    checks.push({
      rule: 'max',
      message: `$property must be at most ${max}`,
      test: (v) => isAmount(v) && decimal(v) <= max,
    });
  }
  if (decimals !== undefined) {
    checks.push({
      rule: 'decimals',
      message: `$property must have at most ${decimals} decimals`,
      test: (v) => isAmount(v) && hasAtMostDecimals(v, decimals),
    });
  }
  return checked(...checks);
}

/** Spaces alone say nothing, and the service refuses them as it refuses an empty value. */
const IS_NOT_BLANK: Check = {
  rule: 'isNotBlank',
  message: '$property must not be only whitespace',
  test: (v) => typeof v !== 'string' || v === '' || v.trim() !== '',
};

// Missing or empty first: a missing field is "must not be empty", not "must be a string".
const TEXT_CHECKS: Check[] = [
  IS_NOT_EMPTY,
  IS_STRING,
  IS_NOT_BLANK,
  maxLength(REQUEST_RULES.maxTextLength),
  {
    rule: 'noControlCharacters',
    message: '$property must not contain control characters or bidirectional overrides',
    test: (v: unknown) => typeof v === 'string' && !REQUEST_RULES.textForbidden.test(v),
  },
];

/** A non-empty string of bounded length. */
export function IsText() {
  return checked(...TEXT_CHECKS);
}

type PhoneRule = 'kenyanPhone' | 'kenyanInternationalPhone' | 'internationalPhone';
const PHONE_RULE_NAMES: Record<PhoneRule, string> = {
  kenyanPhone: 'isKenyanPhoneNumber',
  kenyanInternationalPhone: 'isKenyanInternationalPhoneNumber',
  internationalPhone: 'isInternationalPhoneNumber',
};

/** A phone number of one of the document's formats. */
export function IsPhone(rule: PhoneRule) {
  const { pattern, description } = REQUEST_RULES[rule];
  return checked(
    IS_STRING,
    matches(PHONE_RULE_NAMES[rule], pattern, `$property must be ${description}`),
  );
}

// The length is `maxLength`'s, in code points: isURL's own counts UTF-16 units.
const URL_OPTIONS = {
  protocols: ['http', 'https'],
  require_protocol: true,
  require_tld: false,
  validate_length: false,
};

/**
 * The last URL checked and its verdict: most apps send the same callback URL on every call, and
 * `isURL` (a few µs) answers the same for the same string. Only URLs within the length limit are
 * checked and kept, so a hostile value is never held.
 */
let lastUrl: { value: string; valid: boolean } | undefined;
function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (lastUrl?.value === value) return lastUrl.valid;
  // Too long is `maxLength`'s to report; a hostile value is never parsed.
  if (!hasAtMostCodePoints(value, REQUEST_RULES.maxUrlLength)) return true;
  // Both: `URL` is what the library and the service's HTTP stack parse it with (`isURL` takes
  // some hosts, such as `xn--a.com`, that `URL` refuses).
  const valid = isURL(value, URL_OPTIONS) && URL.canParse(value);
  lastUrl = { value, valid };
  return valid;
}

/** An absolute http(s) URL (hosts without a TLD, such as `localhost`, are allowed). */
export function IsHttpUrl() {
  return checked(IS_STRING, maxLength(REQUEST_RULES.maxUrlLength), {
    rule: 'isUrl',
    message: '$property must be an http or https URL',
    test: isHttpUrl,
  });
}

/** Checks apply only when the field is neither null nor undefined. */
export function Optional() {
  return applyDecorators(IsOptional(), (target: object, key: string | symbol) => {
    fieldRules(target, String(key)).conditions.push('unlessAbsent');
  });
}

/**
 * A field with the fallback rule of section 2.2: empty here is allowed, the service method
 * substitutes the client default and rejects the request if there is none.
 */
export function FallsBackToDefault() {
  return applyDecorators(
    ValidateIf((_object: object, value: unknown) => !isEmptyValue(value)),
    (target: object, key: string | symbol) => {
      fieldRules(target, String(key)).conditions.push('unlessEmpty');
    },
  );
}

export function IsAccountType() {
  return checked(isOneOf(REQUEST_RULES.accountTypes, '$property must be "bank" or "phone"'));
}

export function IsWalletType() {
  return checked(isOneOf(WALLET_TYPES, '$property must be "local" or "USD"'));
}

export function IsNetworkTransactionType() {
  return checked(
    isOneOf(REQUEST_RULES.networkTransactionTypes, '$property must be "receipt" or "withdrawal"'),
  );
}

/** An ISO 4217 code in its canonical upper case (the standard check alone also accepts `kes`). */
export function IsCurrencyCode() {
  return checked(IS_STRING, {
    rule: 'isISO4217CurrencyCode',
    message: '$property must be an upper-case ISO 4217 currency code',
    test: (v) => typeof v === 'string' && /^[A-Z]{3}$/.test(v) && isISO4217(v),
  });
}

/** A Paybill or Till number: digits only, at most `maxBusinessAccountDigits`. */
export function IsBusinessAccount() {
  const max = REQUEST_RULES.maxBusinessAccountDigits;
  return checked(
    ...TEXT_CHECKS,
    matches('matches', new RegExp(`^\\d{1,${max}}$`), `$property must be 1 to ${max} digits`),
  );
}

/** A country dial code such as `+234`. */
export function IsDialCode() {
  const { pattern, description } = REQUEST_RULES.dialCode;
  return checked(IS_STRING, matches('matches', pattern, `$property must be ${description}`));
}

/** A value that is sent as one URL path segment (see `REQUEST_RULES.pathSegment`). */
export function IsPathSegment() {
  return checked(IS_STRING, {
    rule: 'isPathSegment',
    message: `$property must be ${REQUEST_RULES.pathSegment.description}`,
    test: isPathSegment,
  });
}

/**
 * Reads `key` from a caller's object: an own property, or one defined by its class (a getter
 * or an inherited field), but never one found on `Object.prototype`, so pollution cannot inject it.
 */
export function readField(source: object, key: PropertyKey): unknown {
  for (
    let owner: object | null = source;
    owner !== null && owner !== Object.prototype;
    owner = Object.getPrototypeOf(owner) as object | null
  ) {
    if (Object.hasOwn(owner, key)) return Reflect.get(source, key) as unknown;
  }
  return undefined;
}

/** `undefined`, `null` and `''` count as empty for the fallback rule. */
export function isEmptyValue(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** One field's precompiled checks. */
interface CompiledField {
  readonly field: string;
  readonly skipAbsent: boolean;
  readonly skipEmpty: boolean;
  /** In declaration order, each message with the field's name in place of `$property`. */
  readonly checks: readonly Check[];
}

const COMPILED = new Map<object, readonly CompiledField[]>();

/**
 * The checks of `requestClass`, compiled once. Throws if class-validator holds a rule of the
 * class that was not declared through this file, so no decorator can be skipped on the call path.
 */
function compiledChecks(requestClass: new () => object): readonly CompiledField[] {
  const cached = COMPILED.get(requestClass);
  if (cached) return cached;
  const fields = CLASS_RULES.get(requestClass) ?? new Map<string, FieldRules>();
  const declared = [...fields.values()].reduce(
    (sum, rules) => sum + rules.checks.length + rules.conditions.length,
    0,
  );
  const known = getMetadataStorage().getTargetValidationMetadatas(requestClass, '', true, false);
  if (known.length !== declared) {
    throw new Error(
      `${requestClass.name} has ${known.length} class-validator rules but ${declared} declared in request-rules.ts`,
    );
  }
  const compiled = [...fields].map(([field, rules]) => ({
    field,
    skipAbsent: rules.conditions.includes('unlessAbsent'),
    skipEmpty: rules.conditions.includes('unlessEmpty'),
    checks: rules.checks.map(({ rule, message, test }) => ({
      rule,
      message: message.replaceAll('$property', field),
      test,
    })),
  }));
  COMPILED.set(requestClass, compiled);
  return compiled;
}

/**
 * Appends the failed rules of `request` to `errors`, as class-validator's `validateSync` would:
 * fields in declaration order, rules in declaration order, a rule named twice reported once with
 * its last message.
 */
export function checkRequest(
  requestClass: new () => object,
  request: Readonly<Record<string, unknown>>,
  errors: PaymentsFieldError[],
): void {
  for (const compiled of compiledChecks(requestClass)) {
    checkField(compiled, request[compiled.field], errors);
  }
}

const FALLBACK_FIELDS = [
  {
    field: 'username',
    option: 'defaultUsername',
    fromDefaults: (d: PaymentsDefaults) => d.username,
  },
  {
    field: 'callbackUrl',
    option: 'defaultCallbackUrl',
    fromDefaults: (d: PaymentsDefaults) => d.callbackUrl,
  },
] as const;

/** Call options that are booleans when given. */
const BOOLEAN_CALL_OPTIONS = ['retryAmbiguous', 'resend'] as const;

/** The `target` of a call option's error: the call's options, not its request. */
function callOptionsOf(requestClassName: string): string {
  return `${requestClassName} call options`;
}

/** Every call option ({@link PaymentsCallOptions}): any other key is refused. */
const CALL_OPTION_NAMES: ReadonlySet<string> = new Set(['idempotencyKey', ...BOOLEAN_CALL_OPTIONS]);

/**
 * Refuses call options that are not an object of known keys: a misspelled `idempotencykey`, or a
 * key passed as the options themselves, ignored, would send a retry under a new key (paid twice).
 * @throws PaymentsValidationError (`options`, `isObject`; the key, `whitelist`).
 */
export function assertCallOptionNames(requestClassName: string, options: unknown): void {
  const problems = objectOfKnownKeysProblems(
    options,
    'options',
    `the call options must be an object such as { idempotencyKey: 'order-42' }`,
    CALL_OPTION_NAMES,
    (shown) => `${shown} is not a call option: they are ${[...CALL_OPTION_NAMES].join(', ')}`,
  );
  if (problems.length > 0) {
    throw new PaymentsValidationError(callOptionsOf(requestClassName), problems);
  }
}

/** Printable ASCII without spaces, as a header value must be; long enough for any UUID or order id. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` of one logical call: the caller's, validated, or a new UUID v4. Chosen
 * once per call, before the first attempt, so every retry carries the same key.
 * @throws PaymentsValidationError for a key that cannot be a header value.
 */
export function resolveIdempotencyKey(
  requestClassName: string,
  callOptions: PaymentsCallOptions | undefined,
): string {
  for (const flag of BOOLEAN_CALL_OPTIONS) {
    const value: unknown = callOptions?.[flag];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new PaymentsValidationError(callOptionsOf(requestClassName), [
        { field: flag, rule: 'isBoolean', message: `${flag} must be a boolean` },
      ]);
    }
  }
  const key = callOptions?.idempotencyKey;
  if (key === undefined) return randomUUID();
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new PaymentsValidationError(callOptionsOf(requestClassName), [
      {
        field: 'idempotencyKey',
        rule: 'isIdempotencyKey',
        message: 'idempotencyKey must be 1 to 255 printable ASCII characters without spaces',
      },
    ]);
  }
  return key;
}

function unknownKeyError(target: string, key: string): PaymentsFieldError {
  return unknownKeyProblem(key, (shown) => `${shown} is not a field of ${target}`);
}

function missingDefaultError(field: string, option: string): PaymentsFieldError {
  return {
    field,
    rule: 'isNotEmpty',
    message: `${field} is required: the request has none and ${option} is not configured`,
  };
}

/** Reports a field's failed rules, a rule named twice once with its last message. */
function checkField(compiled: CompiledField, value: unknown, errors: PaymentsFieldError[]): void {
  const { field, skipAbsent, skipEmpty, checks } = compiled;
  if (skipAbsent && (value === undefined || value === null)) return;
  if (skipEmpty && isEmptyValue(value)) return;
  let failed: Map<string, string> | undefined;
  for (const { rule, message, test } of checks) {
    if (!test(value)) (failed ??= new Map()).set(rule, message);
  }
  if (failed) reportFailed(errors, field, failed);
}

function reportFailed(
  errors: PaymentsFieldError[],
  field: string,
  failed: ReadonlyMap<string, string>,
): void {
  for (const [rule, message] of failed) errors.push({ field, rule, message });
}

/** What a preparation needs of an operation: its request class and fields. */
interface RequestShape {
  readonly requestClass: new () => object;
  readonly requestFields: readonly string[];
}

/** What `prepareRequest` does once `input` is known to be an object. */
type Preparation = (input: object, defaults: PaymentsDefaults) => object;

/** The preparation of `operation` as a loop over its tables: the reference the generated one must match. */
function interpretedPreparation(operation: RequestShape): Preparation {
  const target = operation.requestClass.name;
  const fields = operation.requestFields;
  const prototype = operation.requestClass.prototype as object;
  return (input, defaults) => {
    const errors: PaymentsFieldError[] = [];
    for (const key of Object.keys(input)) {
      if (!fields.includes(key)) errors.push(unknownKeyError(target, key));
    }
    // An instance without running the constructor: DTOs have none, and every field is set below.
    const request = Object.create(prototype) as Record<string, unknown>;
    for (const field of fields) request[field] = readField(input, field);
    for (const { field, option, fromDefaults } of FALLBACK_FIELDS) {
      if (!fields.includes(field) || !isEmptyValue(request[field])) continue;
      const fallback = fromDefaults(defaults);
      if (isEmptyValue(fallback)) errors.push(missingDefaultError(field, option));
      else request[field] = fallback;
    }
    if (fields.includes('walletType') && isEmptyValue(request.walletType)) {
      request.walletType = defaults.walletType;
    }
    checkRequest(operation.requestClass, request, errors);
    if (errors.length > 0) throw new PaymentsValidationError(target, errors);
    return request;
  };
}

/**
 * The same steps as `interpretedPreparation`, written out field by field with literal names
 * (generated-function.ts); `undefined` where code generation is disallowed.
 */
function generatedPreparation(operation: RequestShape): Preparation | undefined {
  const fields = operation.requestFields;
  const bindings: Record<string, unknown> = {
    TARGET: operation.requestClass.name,
    PROTOTYPE: operation.requestClass.prototype,
    FIELDS: new Set(fields),
    PaymentsValidationError,
    readField,
    isEmptyValue,
    unknownKeyError,
    missingDefaultError,
    reportFailed,
  };
  const lines = [
    'const errors = [];',
    'for (const key of Object.keys(input)) if (!FIELDS.has(key)) errors.push(unknownKeyError(TARGET, key));',
    'const request = Object.create(PROTOTYPE);',
  ];
  for (const field of fields) {
    const name = literal(field);
    lines.push(
      `${property('request', field)} = Object.hasOwn(input, ${name}) ? ${property('input', field)} : readField(input, ${name});`,
    );
  }
  FALLBACK_FIELDS.forEach(({ field, option, fromDefaults }, index) => {
    if (!fields.includes(field)) return;
    bindings[`FALLBACK_${index}`] = fromDefaults;
    lines.push(
      `if (isEmptyValue(${property('request', field)})) {`,
      `  const fallback = FALLBACK_${index}(defaults);`,
      `  if (isEmptyValue(fallback)) errors.push(missingDefaultError(${literal(field)}, ${literal(option)}));`,
      `  else ${property('request', field)} = fallback;`,
      '}',
    );
  });
  if (fields.includes('walletType')) {
    lines.push(`if (isEmptyValue(request.walletType)) request.walletType = defaults.walletType;`);
  }
  compiledChecks(operation.requestClass).forEach(
    ({ field, skipAbsent, skipEmpty, checks }, fieldIndex) => {
      const skip = [
        ...(skipAbsent ? ['value === undefined || value === null'] : []),
        ...(skipEmpty ? ['isEmptyValue(value)'] : []),
      ];
      lines.push(`{`, `  const value = ${property('request', field)};`);
      lines.push(skip.length > 0 ? `  if (!(${skip.join(' || ')})) {` : '  {');
      lines.push('    let failed;');
      checks.forEach(({ rule, message, test }, checkIndex) => {
        const testName = `TEST_${fieldIndex}_${checkIndex}`;
        bindings[testName] = test;
        lines.push(
          `    if (!${testName}(value)) (failed ??= new Map()).set(${literal(rule)}, ${literal(message)});`,
        );
      });
      lines.push(
        `    if (failed !== undefined) reportFailed(errors, ${literal(field)}, failed);`,
        '  }',
        '}',
      );
    },
  );
  lines.push(
    'if (errors.length > 0) throw new PaymentsValidationError(TARGET, errors);',
    'return request;',
  );
  return generateFunction<Preparation>(
    'prepareRequest',
    bindings,
    ['input', 'defaults'],
    lines.join('\n'),
  );
}

const preparationOf = stepPerTable(generatedPreparation, interpretedPreparation);

/** @internal The table-driven preparation, for the specs that hold the generated one to it. */
export function prepareRequestByTables<TRequest extends object>(
  operation: PaymentsOperation<TRequest, unknown>,
  input: object,
  defaults: PaymentsDefaults,
): TRequest {
  return interpretedPreparation(operation)(input, defaults) as TRequest;
}

/**
 * Copies the operation's own fields of `input` into a new request instance, applies the fallback
 * rule (2.2) and the wallet rule (2.4, 4.2), and runs the precompiled checks of the class. The
 * caller's object is not modified; keys that are not fields of the operation (including
 * `__proto__`) are rejected.
 * @throws PaymentsValidationError listing every failed field and rule.
 */
export function prepareRequest<TRequest extends object>(
  operation: PaymentsOperation<TRequest, unknown>,
  input: unknown,
  defaults: PaymentsDefaults,
): TRequest {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new PaymentsValidationError(operation.requestClass.name, [
      { field: 'request', rule: 'isObject', message: 'request must be an object' },
    ]);
  }
  return preparationOf(operation)(input, defaults) as TRequest;
}
