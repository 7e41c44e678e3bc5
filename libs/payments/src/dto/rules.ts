import type { ValidationOptions } from 'class-validator';
import {
  IsIn,
  isISO4217CurrencyCode,
  IsNotEmpty,
  IsNumber,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { WALLET_TYPES } from '../payments-options.interface';

/**
 * Every limit and format of the interface document (sections 2.5, 2.7, 8) in one table.
 * Text and URL lengths are ours: the document sets none, these bound hostile input.
 */
export const REQUEST_RULES = {
  kesMobileMoneyAmount: { min: 10, max: 250_000 },
  cardAmount: { min: 100 },
  kenyanPhone: {
    pattern: /^(?:0\d{9}|\+254\d{9})$/,
    description: 'a Kenyan phone number, 0XXXXXXXXX or +254XXXXXXXXX',
  },
  kenyanInternationalPhone: {
    pattern: /^\+254\d{9}$/,
    description: 'a Kenyan phone number with country code, +254XXXXXXXXX',
  },
  internationalPhone: {
    pattern: /^\+[1-9]\d{6,14}$/,
    description: 'a phone number with country code, + and 7 to 15 digits',
  },
  accountTypes: ['bank', 'phone'] as const,
  networkTransactionTypes: ['receipt', 'withdrawal'] as const,
  dialCode: { pattern: /^\+\d{1,4}$/, description: 'a dial code, + and 1 to 4 digits' },
  /**
   * A value that goes into a URL path (a reference, a username): printable ASCII without `/`,
   * `\\`, `?`, `#` or `..`, so it cannot reach another endpoint.
   */
  pathSegment: {
    pattern: /^(?!\.$)(?!.*\.\.)[\x21-\x7e]{1,128}$/,
    forbidden: /[/\\?#]/,
    description: '1 to 128 printable characters, not ".", without "/", "\\", "?", "#" or ".."',
  },
  maxTextLength: 255,
  maxUrlLength: 2048,
} as const;

/** Account and channel type of pan-African requests. */
export type AccountType = (typeof REQUEST_RULES.accountTypes)[number];

function isAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** A finite number within `[min, max]`, with rule names `isNumber`, `min` and `max`. */
export function IsAmount(limits: { min?: number; max?: number; positive?: boolean }) {
  const bounds: PropertyDecorator[] = [
    IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a number' }),
  ];
  if (limits.positive) {
    bounds.push(
      ValidateBy({
        name: 'isPositive',
        validator: {
          validate: (v: unknown) => isAmount(v) && v > 0,
          defaultMessage: () => '$property must be greater than 0',
        },
      }),
    );
  }
  if (limits.min !== undefined) {
    const min = limits.min;
    bounds.push(
      ValidateBy({
        name: 'min',
        validator: {
          validate: (v: unknown) => isAmount(v) && v >= min,
          defaultMessage: () => `$property must be at least ${min}`,
        },
      }),
    );
  }
  if (limits.max !== undefined) {
    const max = limits.max;
    bounds.push(
      ValidateBy({
        name: 'max',
        validator: {
          validate: (v: unknown) => isAmount(v) && v <= max,
          defaultMessage: () => `$property must be at most ${max}`,
        },
      }),
    );
  }
  return applyDecorators(...bounds);
}

/** A non-empty string of bounded length. */
export function IsText() {
  return applyDecorators(
    IsString({ message: '$property must be a string' }),
    IsNotEmpty({ message: '$property must not be empty' }),
    MaxLength(REQUEST_RULES.maxTextLength, {
      message: `$property must be at most ${REQUEST_RULES.maxTextLength} characters`,
    }),
  );
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
  return applyDecorators(
    IsString({ message: '$property must be a string' }),
    ValidateBy({
      name: PHONE_RULE_NAMES[rule],
      validator: {
        validate: (v: unknown) => typeof v === 'string' && pattern.test(v),
        defaultMessage: () => `$property must be ${description}`,
      },
    }),
  );
}

/** An absolute http(s) URL (hosts without a TLD, such as `localhost`, are allowed). */
export function IsHttpUrl(options?: ValidationOptions) {
  return applyDecorators(
    IsString({ message: '$property must be a string' }),
    MaxLength(REQUEST_RULES.maxUrlLength, {
      message: `$property must be at most ${REQUEST_RULES.maxUrlLength} characters`,
    }),
    IsUrl(
      { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
      { message: '$property must be an http or https URL', ...options },
    ),
  );
}

/**
 * A field with the fallback rule of section 2.2: empty here is allowed, the service method
 * substitutes the client default and rejects the request if there is none.
 */
export function FallsBackToDefault() {
  return ValidateIf((_object: object, value: unknown) => !isEmptyValue(value));
}

/**
 * Reads `key` from a caller's object: an own property, or one defined by its class (a getter
 * or an inherited field), but never one found on `Object.prototype`, so pollution cannot inject it.
 */
export function readField(source: object, key: string): unknown {
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

export function IsAccountType() {
  return IsIn(REQUEST_RULES.accountTypes, { message: '$property must be "bank" or "phone"' });
}

export function IsWalletType() {
  return IsIn(WALLET_TYPES, { message: '$property must be "local" or "USD"' });
}

/** An ISO 4217 code in its canonical upper case (class-validator alone also accepts `kes`). */
export function IsCurrencyCode() {
  return applyDecorators(
    IsString({ message: '$property must be a string' }),
    ValidateBy({
      name: 'isISO4217CurrencyCode',
      validator: {
        validate: (v: unknown) =>
          typeof v === 'string' && /^[A-Z]{3}$/.test(v) && isISO4217CurrencyCode(v),
        defaultMessage: () => '$property must be an upper-case ISO 4217 currency code',
      },
    }),
  );
}

/** A Paybill or Till number: digits only. */
export function IsBusinessAccount() {
  return applyDecorators(
    IsText(),
    Matches(/^\d+$/, { message: '$property must contain digits only' }),
  );
}

/** A country dial code such as `+234`. */
export function IsDialCode() {
  const { pattern, description } = REQUEST_RULES.dialCode;
  return applyDecorators(
    IsString({ message: '$property must be a string' }),
    Matches(pattern, { message: `$property must be ${description}` }),
  );
}

/** A value that is sent as one URL path segment (see `REQUEST_RULES.pathSegment`). */
export function IsPathSegment() {
  const { pattern, forbidden, description } = REQUEST_RULES.pathSegment;
  return applyDecorators(
    IsString({ message: '$property must be a string' }),
    ValidateBy({
      name: 'isPathSegment',
      validator: {
        validate: (v: unknown) => typeof v === 'string' && pattern.test(v) && !forbidden.test(v),
        defaultMessage: () => `$property must be ${description}`,
      },
    }),
  );
}
