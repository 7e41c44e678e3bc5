import { REQUEST_RULES } from '@malipo/nestjs/dto/rules';
import { WALLET_TYPES } from '@malipo/nestjs/payments-options.interface';

/**
 * Server-side checks of the snake_case wire body, with the limits of the interface document
 * (sections 2.5, 2.7, 8). The limits come from the library's own table, so both sides agree.
 */
export type FieldRule =
  | { kind: 'text' }
  | { kind: 'amount'; min?: number; max?: number; positive?: boolean }
  | { kind: 'phone'; format: 'kenyanPhone' | 'kenyanInternationalPhone' | 'internationalPhone' }
  | { kind: 'oneOf'; values: readonly string[] }
  | { kind: 'currency' }
  | { kind: 'url' }
  | { kind: 'digits' };

/** A rule plus whether the key may be left out (the client omits absent optional fields). */
export type FieldSpec = FieldRule & { optional?: boolean };

export const rule = {
  text: (): FieldSpec => ({ kind: 'text' }),
  amount: (limits: { min?: number; max?: number; positive?: boolean }): FieldSpec => ({
    kind: 'amount',
    ...limits,
  }),
  phone: (
    format: 'kenyanPhone' | 'kenyanInternationalPhone' | 'internationalPhone',
  ): FieldSpec => ({
    kind: 'phone',
    format,
  }),
  oneOf: (values: readonly string[]): FieldSpec => ({ kind: 'oneOf', values }),
  accountType: (): FieldSpec => ({ kind: 'oneOf', values: REQUEST_RULES.accountTypes }),
  walletType: (): FieldSpec => ({ kind: 'oneOf', values: WALLET_TYPES, optional: true }),
  currency: (): FieldSpec => ({ kind: 'currency' }),
  url: (): FieldSpec => ({ kind: 'url' }),
  digits: (): FieldSpec => ({ kind: 'digits' }),
  optional: (spec: FieldSpec): FieldSpec => ({ ...spec, optional: true }),
};

/** The problem with one value, or undefined when it passes. Messages follow the key name. */
function check(spec: FieldRule, value: unknown): string | undefined {
  switch (spec.kind) {
    case 'text':
      if (typeof value !== 'string' || value.trim() === '') return 'must be a non-empty string';
      if (value.length > REQUEST_RULES.maxTextLength) {
        return `must be at most ${REQUEST_RULES.maxTextLength} characters`;
      }
      return undefined;
    case 'amount':
      // Numbers only: "1500" is refused, as a typed client never sends it.
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (spec.positive && value <= 0) return 'must be greater than 0';
      if (spec.min !== undefined && value < spec.min) return `must be at least ${spec.min}`;
      if (spec.max !== undefined && value > spec.max) return `must be at most ${spec.max}`;
      return undefined;
    case 'phone': {
      const { pattern, description } = REQUEST_RULES[spec.format];
      return typeof value === 'string' && pattern.test(value)
        ? undefined
        : `must be ${description}`;
    }
    case 'oneOf':
      return typeof value === 'string' && spec.values.includes(value)
        ? undefined
        : `must be one of ${spec.values.map((v) => `"${v}"`).join(', ')}`;
    case 'currency':
      return typeof value === 'string' && /^[A-Z]{3}$/.test(value)
        ? undefined
        : 'must be a 3-letter upper-case currency code';
    case 'url':
      return isHttpUrl(value) ? undefined : 'must be an http or https URL';
    case 'digits':
      return typeof value === 'string' && /^\d{1,32}$/.test(value)
        ? undefined
        : 'must contain digits only';
  }
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > REQUEST_RULES.maxUrlLength) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Every problem of the body, in the order of the field table; empty when the body is valid. */
export function validateWireBody(
  fields: Readonly<Record<string, FieldSpec>>,
  body: Record<string, unknown>,
): string[] {
  const problems: string[] = [];
  for (const [key, spec] of Object.entries(fields)) {
    const value = body[key];
    // null counts as absent: the client drops null fields, so it only comes from a hand-made body.
    if (value === undefined || value === null) {
      if (!spec.optional) problems.push(`${key} is required`);
      continue;
    }
    const problem = check(spec, value);
    if (problem) problems.push(`${key} ${problem}`);
  }
  return problems;
}
