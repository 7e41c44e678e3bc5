import { createHmac, timingSafeEqual } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  DEFAULT_SIGNATURE_HEADER,
  PAYMENTS_WEBHOOK_LOGGER_CONTEXT,
} from './payments-webhook.constants';
import type { PaymentWebhookDelivery } from './payments-webhook.interfaces';

/** Options of {@link verifyPaymentsSignature}. */
export interface PaymentsSignatureOptions {
  /**
   * The signing secret, or several while you rotate it: a delivery signed with any of them passes.
   * None may be empty.
   */
  secrets: string | readonly string[];
  /** Header holding the hex signature, in any case. Default `x-payd-connect-signature`. */
  header?: string;
  /**
   * What the signature covers, read from the raw body in both cases:
   * - `sorted-keys` (default): the body parsed and serialised again with its top-level keys sorted
   *   and no spaces, as the service's Connect product signs and its SDK's `webhooks.verify` checks
   *   (docs/wire-contract.md, "Webhook (callback) payload");
   * - `raw`: the body's bytes exactly as received (a middleware of yours that signs what it
   *   sends): any change of a byte, spaces included, fails.
   */
  signedBody?: 'sorted-keys' | 'raw';
}

/** A hex HMAC-SHA256: 32 bytes. */
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/i;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;

/** The options, checked; the messages name what is wrong, never a secret's value. */
function checked(options: PaymentsSignatureOptions): {
  secrets: Buffer[];
  header: string;
  signedBody: 'sorted-keys' | 'raw';
} {
  const fail = (why: string) => new Error(`verifyPaymentsSignature: ${why}`);
  if (typeof options !== 'object' || options === null) {
    throw fail('options { secrets } are required');
  }
  const given: unknown = options.secrets;
  const list: unknown[] = typeof given === 'string' ? [given] : Array.isArray(given) ? given : [];
  if (list.length === 0) {
    throw fail('secrets must be a non-empty string or a non-empty array of them');
  }
  list.forEach((secret, index) => {
    const which = list.length === 1 ? 'the secret' : `secret ${index + 1} of ${list.length}`;
    if (typeof secret !== 'string') throw fail(`${which} is not a string`);
    // An unset environment variable often arrives as '' or ' ': it would be a key anyone knows.
    if (secret.trim() === '') throw fail(`${which} is empty`);
  });
  const header = options.header ?? DEFAULT_SIGNATURE_HEADER;
  if (typeof header !== 'string' || !HEADER_NAME_PATTERN.test(header)) {
    throw fail('header must be an HTTP header name');
  }
  const signedBody = options.signedBody ?? 'sorted-keys';
  if (signedBody !== 'sorted-keys' && signedBody !== 'raw') {
    throw fail("signedBody must be 'sorted-keys' or 'raw'");
  }
  return {
    secrets: (list as string[]).map((secret) => Buffer.from(secret, 'utf8')),
    header: header.toLowerCase(),
    signedBody,
  };
}

/**
 * The body as `sorted-keys` signs it, or `undefined` when it is not a JSON object. The property
 * list of `JSON.stringify` is what the signer uses (docs/wire-contract.md): it orders the top-level
 * keys, and inside nested values keeps only keys of those names. Parsed here from the raw bytes,
 * never from the app's parsed body, which a middleware may have changed.
 */
function sortedKeysForm(rawBody: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(rawBody.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    return JSON.stringify(parsed, Object.keys(parsed).sort());
  } catch {
    // Not JSON, or nested deeper than JSON.stringify can write (a RangeError): no signature of
    // the service's can be over it, so it is refused as unsigned (401), not failed (500).
    return undefined;
  }
}

/**
 * A `verify` hook for `PaymentsWebhookModule` that accepts only deliveries signed with one of
 * `secrets`: the hex HMAC-SHA256 in `header` (default `X-Payd-Connect-Signature`), computed over
 * the raw body. Deliveries through the service's Connect product, or a middleware of yours, are
 * signed; the service's direct callbacks are not, so keep `confirm` on.
 *
 * The app must be created with `rawBody: true` (`NestFactory.create(AppModule, { rawBody: true })`):
 * without the raw bytes every delivery is refused (401) and an error is logged once.
 * @throws Error at once when the options are unusable (no secret, an empty one, a bad header name).
 */
export function verifyPaymentsSignature(
  options: PaymentsSignatureOptions,
): (delivery: PaymentWebhookDelivery) => boolean {
  const { secrets, header, signedBody } = checked(options);
  const logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);
  let toldNoRawBody = false;
  return ({ headers, body, rawBody }) => {
    if (!Buffer.isBuffer(rawBody)) {
      // A parsed body without its bytes: the app's body parser does not keep them.
      if (!toldNoRawBody && typeof body === 'object' && body !== null) {
        toldNoRawBody = true;
        logger.error(
          'verifyPaymentsSignature refuses every delivery: the request has no raw body. Create ' +
            'the app with NestFactory.create(AppModule, { rawBody: true }).',
        );
      }
      return false;
    }
    const value = headers[header];
    // An array is a header sent several times: which one was signed is anyone's guess.
    if (typeof value !== 'string' || !SIGNATURE_PATTERN.test(value)) return false;
    const signed = signedBody === 'raw' ? rawBody : sortedKeysForm(rawBody);
    if (signed === undefined) return false;
    const given = Buffer.from(value, 'hex');
    let matched = false;
    // Every secret is tried, matched or not: the time taken does not tell which one matched.
    for (const secret of secrets) {
      const expected = createHmac('sha256', secret).update(signed).digest();
      matched = timingSafeEqual(given, expected) || matched;
    }
    return matched;
  };
}
