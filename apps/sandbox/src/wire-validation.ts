/**
 * Server-side checks of the snake_case wire body, as the wire contract (version 2) fixes them:
 * the keys of its "Request bodies" table, their constants, and the limits of the interface
 * document (sections 2.5, 2.7, 8). The sandbox keeps its own copy of these rules, so that a
 * client that drifts from the contract fails against it.
 */
export const WIRE_RULES = {
  kesMobileMoneyAmount: { min: 10, max: 250_000 },
  cardAmount: { min: 100 },
  maxTextLength: 255,
  maxUrlLength: 2048,
  phones: {
    /** What the real service accepts for Kenyan operations: the local form only. */
    kenyanLocal: { pattern: /^0\d{9}$/, description: 'a Kenyan number 0XXXXXXXXX' },
    kenyanInternational: {
      pattern: /^\+254\d{9}$/,
      description: 'a Kenyan number with country code, +254XXXXXXXXX',
    },
    international: {
      pattern: /^\+[1-9]\d{6,14}$/,
      description: 'a phone number with country code, + and 7 to 15 digits',
    },
  },
  accountTypes: ['bank', 'phone'] as const,
} as const;

export type PhoneFormat = keyof typeof WIRE_RULES.phones;

export type FieldRule =
  | { kind: 'text' }
  | { kind: 'constant'; value: string; hint?: string }
  | { kind: 'amount'; min?: number; max?: number; positive?: boolean }
  | { kind: 'phone'; format: PhoneFormat }
  | { kind: 'oneOf'; values: readonly string[] }
  | { kind: 'currency' }
  | { kind: 'url' }
  | { kind: 'digits' };

/** A rule plus whether the key may be left out. */
export type FieldSpec = FieldRule & { optional?: boolean };

export const rule = {
  text: (): FieldSpec => ({ kind: 'text' }),
  constant: (value: string, hint?: string): FieldSpec => ({ kind: 'constant', value, hint }),
  amount: (limits: { min?: number; max?: number; positive?: boolean }): FieldSpec => ({
    kind: 'amount',
    ...limits,
  }),
  phone: (format: PhoneFormat): FieldSpec => ({ kind: 'phone', format }),
  oneOf: (values: readonly string[]): FieldSpec => ({ kind: 'oneOf', values }),
  accountType: (): FieldSpec => ({ kind: 'oneOf', values: WIRE_RULES.accountTypes }),
  /** Sent only for the USD wallet; the local wallet is expressed by its absence. */
  walletType: (): FieldSpec => ({
    kind: 'constant',
    value: 'USD',
    hint: 'leave it out for the local wallet',
    optional: true,
  }),
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
      // Characters are code points (docs/wire-contract.md): an emoji is one, not two.
      if (!atMostCodePoints(value, WIRE_RULES.maxTextLength)) {
        return `must be at most ${WIRE_RULES.maxTextLength} characters`;
      }
      return undefined;
    case 'constant':
      return value === spec.value
        ? undefined
        : `must be "${spec.value}"${spec.hint ? ` (${spec.hint})` : ''}`;
    case 'amount':
      // Numbers only: "1500" is refused, as a typed client never sends it.
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (spec.positive && value <= 0) return 'must be greater than 0';
      if (spec.min !== undefined && value < spec.min) return `must be at least ${spec.min}`;
      if (spec.max !== undefined && value > spec.max) return `must be at most ${spec.max}`;
      return undefined;
    case 'phone': {
      const { pattern, description } = WIRE_RULES.phones[spec.format];
      if (typeof value === 'string' && pattern.test(value)) return undefined;
      // The real service's own words for a Kenyan number in another form.
      const real =
        spec.format === 'kenyanLocal'
          ? `: number (${String(value)}) is not valid kenyan number`
          : '';
      return `must be ${description}${real}`;
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
        : 'must be 1 to 32 digits';
  }
}

/** Whether `value` has at most `max` code points; never walks one longer than 2 × max units. */
function atMostCodePoints(value: string, max: number): boolean {
  if (value.length <= max) return true;
  if (value.length > 2 * max) return false;
  let count = 0;
  for (const _ of value) if (++count > max) return false;
  return true;
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (!atMostCodePoints(value, WIRE_RULES.maxUrlLength)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Every problem of the body, empty when it is valid: first the keys the table does not list,
 * then the table's keys in order (missing, or breaking their rule).
 */
export function validateWireBody(
  fields: Readonly<Record<string, FieldSpec>>,
  body: Record<string, unknown>,
): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(fields, key)) problems.push(`${key} is not an accepted key`);
  }
  for (const [key, spec] of Object.entries(fields)) {
    const value = body[key];
    // null counts as absent: the contract never sends null.
    if (value === undefined || value === null) {
      if (!spec.optional) problems.push(`${key} is required`);
      continue;
    }
    const problem = check(spec, value);
    if (problem) problems.push(`${key} ${problem}`);
  }
  return problems;
}
