// Secrets and typed failures: a server echoing the credentials back in every common encoding
// never gets them into a log line, an error or `_raw`; an answer no check foresaw (100,000-deep
// JSON) changes nothing; everything the library throws is a PaymentsError.
import { ConsoleLogger, Logger } from '@nestjs/common';
import {
  createPaymentsClient,
  PaymentsError,
  PaymentsValidationError,
  ServiceAPIError,
} from '@malipo/nestjs';
import type { PaymentsClient, PaymentsModuleOptions } from '@malipo/nestjs';
import { CapturingLogger, everythingVisibleIn } from '../../libs/payments/spec-support/capture';
import {
  answer,
  failure,
  HostileServer,
  PASSWORD,
  PAYOUT,
  PAYOUT_ANSWER,
  PAYOUT_REFERENCE,
  refusingUrl,
  USERNAME,
} from './support/hostile';

const clients: PaymentsClient[] = [];
function clientOf(
  baseUrl: string,
  options: Partial<PaymentsModuleOptions> = {},
  password = PASSWORD,
): PaymentsClient {
  const client = createPaymentsClient({
    apiUsername: USERNAME,
    apiPassword: password,
    baseUrl,
    ...options,
  });
  clients.push(client);
  return client;
}

const logger = new CapturingLogger();
beforeAll(() => {
  Logger.overrideLogger(logger);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  logger.lines.length = 0;
});
afterAll(() => {
  Logger.overrideLogger(new ConsoleLogger());
});

/** `\uXXXX` of every UTF-16 code unit, as JSON encoders with ASCII output write text. */
const escapeAll = (text: string, upper = false) =>
  Array.from({ length: text.length }, (_, i) => {
    const hex = text.charCodeAt(i).toString(16).padStart(4, '0');
    return `\\u${upper ? hex.toUpperCase() : hex}`;
  }).join('');

/** The encodings of the credentials a server or a log pipeline commonly applies. */
function echoedForms(password: string): [string, string][] {
  const token = Buffer.from(`${USERNAME}:${password}`).toString('base64');
  const hex = Buffer.from(password).toString('hex');
  return [
    ['the URL-encoded Basic token', encodeURIComponent(token)],
    ['the Basic token without = padding', token.replace(/=+$/, '')],
    ['base64url of the token', Buffer.from(token, 'base64').toString('base64url')],
    ['base64 of the password', Buffer.from(password).toString('base64')],
    ['hex of the password', hex],
    ['upper-case hex of the password', hex.toUpperCase()],
    ['the password \\u-escaped', escapeAll(password)],
    ['the password \\u-escaped in upper-case hex', escapeAll(password, true)],
    ['the password with its / escaped as \\/', password.replaceAll('/', '\\/')],
  ];
}

describe('hostile secrets', () => {
  describe('credentials echoed back never reach a log line, an error or _raw', () => {
    let server: HostileServer;
    beforeAll(async () => {
      server = await HostileServer.start(answer(PAYOUT_ANSWER));
    });
    afterAll(() => server.close());

    /** The forms echoed in a non-JSON error body, a header, a JSON error and a success answer. */
    async function echoAll(form: string, password = PASSWORD): Promise<string> {
      const client = clientOf(server.url, { debug: true }, password);
      const errors: ServiceAPIError[] = [];
      // A header carries only printable ASCII.
      const echoHeader = /^[\x20-\x7e]*$/.test(form) ? { 'x-echo': form } : {};
      server.handle = answer(`<html>denied ${form}</html>`, 400, 0, echoHeader);
      errors.push(await failure(client.payouts.mpesa(PAYOUT)));
      server.handle = answer({ success: false, message: `bad ${form}`, echo: form }, 422);
      errors.push(await failure(client.payouts.mpesa(PAYOUT)));
      server.handle = answer(`${form} is not JSON`, 200);
      errors.push(await failure(client.payouts.mpesa(PAYOUT)));
      server.handle = answer({ ...PAYOUT_ANSWER, echo: form, nested: [{ form }] });
      const response = await client.payouts.mpesa(PAYOUT);

      expect(errors.map((e) => e.code)).toEqual([
        'SERVICE_ERROR',
        'SERVICE_ERROR',
        'INVALID_RESPONSE',
      ]);
      expect(logger.lines.length).toBeGreaterThanOrEqual(16);
      return [
        ...errors.map((error) => everythingVisibleIn(error)),
        ...errors.map((error) => JSON.stringify([error.body, error.headers])),
        JSON.stringify(response._raw),
        ...logger.lines.map((line) => line.message),
      ].join('\n');
    }

    it.each(echoedForms(PASSWORD))('redacts %s', async (_label, form) => {
      const visible = await echoAll(form);
      expect(visible).not.toContain(form);
      expect(visible).toContain('[REDACTED]');
    });

    it.each(echoedForms('p\u00e4ss-\u{1F511}-w0rd/x'))(
      'redacts %s of a password with non-ASCII and a character outside the BMP',
      async (_label, form) => {
        const visible = await echoAll(form, 'p\u00e4ss-\u{1F511}-w0rd/x');
        expect(visible).not.toContain(form);
        expect(visible).toContain('[REDACTED]');
      },
    );
  });

  describe('no untyped failure', () => {
    const DEPTH = 100_000;
    const deepAnswer = `${JSON.stringify(PAYOUT_ANSWER).slice(0, -1)},"deep":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`;
    let server: HostileServer;
    beforeAll(async () => {
      server = await HostileServer.start(answer(deepAnswer));
    });
    afterAll(() => server.close());

    it('resolves a 200 payout answer holding 100,000-deep JSON the same way with debug off and on', async () => {
      server.handle = answer(deepAnswer);
      const outcomes = [];
      for (const debug of [false, true]) {
        outcomes.push(
          await clientOf(server.url, { debug })
            .payouts.mpesa(PAYOUT)
            .then(
              (response) => response.transactionReference,
              (error: unknown) => error,
            ),
        );
      }
      expect(outcomes).toEqual([PAYOUT_REFERENCE, PAYOUT_REFERENCE]);
      expect(logger.lines.some((line) => line.message.includes('response data'))).toBe(true);
    });

    it.each([
      ['an error status', 400, 'SERVICE_ERROR'],
      ['a 5xx', 500, 'SERVICE_ERROR'],
    ] as const)(
      'rejects deep JSON under %s with a typed error, debug off and on',
      async (_label, status, code) => {
        server.handle = answer(deepAnswer.replace('"success":true', '"success":false'), status);
        for (const debug of [false, true]) {
          const error = await failure(
            clientOf(server.url, { debug, maxRetries: 0 }).payouts.mpesa(PAYOUT),
          );
          expect(error).toMatchObject({ code, status, attempts: 1 });
          expect(typeof error.idempotencyKey).toBe('string');
        }
      },
    );

    it('rejects deep JSON that is not an object (a 200 array) with INVALID_RESPONSE', async () => {
      server.handle = answer(`${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`);
      for (const debug of [false, true]) {
        const error = await failure(clientOf(server.url, { debug }).payouts.mpesa(PAYOUT));
        expect(error).toMatchObject({
          code: 'INVALID_RESPONSE',
          attempts: 1,
          mayHaveExecuted: true,
        });
      }
    });

    it('throws only PaymentsError: bad options, bad requests, bad call options, closed client, network', async () => {
      const url = await refusingUrl();
      const thrown: unknown[] = [];
      const attempt = async (body: () => unknown) => {
        try {
          await body();
          thrown.push(new Error('no error'));
        } catch (error) {
          thrown.push(error);
        }
      };
      const loose = (value: unknown) => value as never;
      await attempt(() => createPaymentsClient(loose(null)));
      await attempt(() => createPaymentsClient(loose({ apiUsername: USERNAME })));
      await attempt(() => clientOf('ftp://payments.example.com'));
      await attempt(() => clientOf(url, loose({ timeout: Infinity })));
      const client = clientOf(url, { maxRetries: 0 });
      await attempt(() => client.payouts.mpesa(loose(null)));
      await attempt(() => client.payouts.mpesa(loose('0712345678')));
      await attempt(() => client.payouts.mpesa(loose({ ...PAYOUT, amount: 10n })));
      await attempt(() => client.payouts.mpesa(loose({ ...PAYOUT, amount: { valueOf: () => 1 } })));
      await attempt(() => client.payouts.mpesa(PAYOUT, loose({ idempotencyKey: 42 })));
      await attempt(() => client.payouts.mpesa(PAYOUT, loose({ retryAmbiguous: 'no' })));
      await attempt(() => client.payouts.mpesa(PAYOUT));
      await client.close();
      await attempt(() => client.payouts.mpesa(PAYOUT));

      expect(thrown).toHaveLength(12);
      for (const error of thrown) expect(error).toBeInstanceOf(PaymentsError);
      expect(thrown.slice(0, 4).every((e) => e instanceof PaymentsValidationError)).toBe(true);
      expect(thrown.slice(-2).map((e) => (e as ServiceAPIError).code)).toEqual([
        'NETWORK_ERROR',
        'CLIENT_CLOSED',
      ]);
      for (const error of thrown.filter((e) => e instanceof ServiceAPIError)) {
        expect(typeof error.idempotencyKey).toBe('string');
        expect(typeof error.attempts).toBe('number');
      }
    });
  });
});
