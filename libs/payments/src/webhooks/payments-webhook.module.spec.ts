import kenyaFailure from '../../spec-support/real-service/webhooks/kenya-failure.json';
import kenyaSuccess from '../../spec-support/real-service/webhooks/kenya-success.json';
import panAfricanFailure from '../../spec-support/real-service/webhooks/pan-african-failure.json';
import panAfricanSuccess from '../../spec-support/real-service/webhooks/pan-african-success.json';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  INestApplication,
  Injectable,
  LoggerService,
  Module,
  type DynamicModule,
  type Provider,
} from '@nestjs/common';
import { LazyModuleLoader, ModulesContainer, REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { waitFor } from '../../spec-support/wait-for';
import { PaymentsModule } from '../payments.module';
import { PaymentsValidationError } from '../errors';
import { OnPaymentEvent } from './on-payment-event.decorator';
import {
  parsePaymentWebhook,
  type PaymentDuplicateEvent,
  type PaymentWebhookEvent,
} from './payment-webhook-event';
import { PaymentsWebhookConfirmation } from './payments-webhook.confirmation';
import { PaymentsWebhookDispatcher } from './payments-webhook.dispatcher';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import { PaymentsWebhookModule } from './payments-webhook.module';
import type { PaymentsWebhookOptionsFactory } from './payments-webhook.module-definition';
import { verifyPaymentsSignature } from './payments-webhook.signature';
import {
  InMemoryPaymentsWebhookStore,
  type PaymentsWebhookClaim,
  type PaymentsWebhookStore,
} from './payments-webhook.store';

const API_USERNAME = 'shop-user';
const API_PASSWORD = 'webhook-spec-password';

/** The service's own examples (docs/wire-contract.md), recorded once for all tests. */
const EXAMPLES = { kenyaSuccess, kenyaFailure, panAfricanSuccess, panAfricanFailure };

const PHONE = '+254700000000';

/** A status record of the real shape (shared/fixtures/transactions/status-response.json). */
function statusRecord(reference: string, status: string, amount: number) {
  return {
    id: '00000000-0000-4000-a000-000000000001',
    account_id: '',
    billing_currency: '',
    currency: 'KES',
    code: reference,
    conversion_rate: 0,
    amount,
    billing_currency_amount: 0,
    balance: 50000.0,
    type: 'receipt',
    transaction_details: {
      payer: PHONE,
      merchant_id: `${reference}:UBC7G6FFA3`,
      phone_number: PHONE,
      processed_at: { seconds: 1770888820, nanos: 350838138 },
      reason: 'Successfully processes m-pesa transaction',
      channel: 'mobile',
      account_number: '00000000-0000-4000-a000-000000000002',
      status,
      receiver: 'Your Business Name',
      email_address: 'you@example.com',
    },
    transaction_category: 'fiat',
    user_id: '',
    request_metadata: null,
    created_at: '2026-02-12T09:33:40.360254Z',
  };
}

interface StatusAnswer {
  status: number;
  body: unknown;
}

/**
 * The service's status look-up on loopback: `GET /api/v1/status/:reference` answers what the test
 * set for that reference, else 404 as an unknown reference.
 */
class StatusServer {
  readonly requests: { reference: string; authorization?: string }[] = [];
  private readonly answers = new Map<string, StatusAnswer>();
  /** Answers each look-up takes in turn before the last one stays (see `settleInTurn`). */
  private readonly turns = new Map<string, StatusAnswer[]>();
  private held?: Promise<void>;
  private release?: () => void;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<StatusServer> {
    let handler: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
    const server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const status = new StatusServer(server, `http://127.0.0.1:${port}`);
    handler = (req, res) => status.handle(req, res);
    return status;
  }

  /** The service's record of `reference`: settled with `status` (`success`, `failed`...). */
  settle(reference: string, status: string, amount: number): void {
    this.answers.set(reference, { status: 200, body: statusRecord(reference, status, amount) });
  }

  /**
   * The record of `reference` goes through `statuses`: each look-up answers the next one, and the
   * last one stays (`pending`, `pending`, `success`: a record the service settles meanwhile).
   */
  settleInTurn(reference: string, statuses: string[], amount: number): void {
    const answers = statuses.map((s) => ({
      status: 200,
      body: statusRecord(reference, s, amount),
    }));
    this.answers.set(reference, answers[0]);
    this.turns.set(reference, answers);
  }

  /** Look-ups are answered only once the function returned is called. */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    this.release = () => {
      this.held = undefined;
      release();
    };
    return this.release;
  }

  /** The look-up of `reference` answers `answer` as it is. */
  answer(reference: string, answer: StatusAnswer): void {
    this.answers.set(reference, answer);
  }

  /** Records consistent with each example webhook. */
  settleExamples(): void {
    for (const body of Object.values(EXAMPLES)) {
      const amount = 'amount' in body ? body.amount : 10;
      this.settle(body.transaction_reference, body.success ? 'success' : 'failed', amount);
    }
  }

  reset(): void {
    // Look-ups a failed test left held are answered, so that close() does not wait for them.
    this.release?.();
    this.answers.clear();
    this.turns.clear();
    this.requests.length = 0;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse, counted = true): void {
    const match = /^\/api\/v1\/status\/([^/?]+)$/.exec(req.url ?? '');
    const reference = match ? decodeURIComponent(match[1]) : '';
    if (counted) this.requests.push({ reference, authorization: req.headers.authorization });
    if (this.held) {
      void this.held.then(() => this.handle(req, res, false));
      return;
    }
    const next = this.turns.get(reference)?.shift();
    if (next) this.answers.set(reference, next);
    const answer = (match && req.method === 'GET' && this.answers.get(reference)) || {
      status: 404,
      body: { status: 404, success: false, message: 'transaction not found' },
    };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }
}

@Injectable()
class Handlers {
  readonly collections: PaymentWebhookEvent[] = [];
  readonly payouts: PaymentWebhookEvent[] = [];
  readonly transfers: PaymentWebhookEvent[] = [];
  readonly all: PaymentWebhookEvent[] = [];
  readonly duplicates: PaymentDuplicateEvent[] = [];
  /** Calls to the collection handler, failed ones included. */
  collectionCalls = 0;
  failNext = false;
  delayMs = 0;

  @OnPaymentEvent('collection.succeeded', 'collection.failed')
  async onCollection(event: PaymentWebhookEvent) {
    this.collectionCalls += 1;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database down');
    }
    this.collections.push(event);
  }

  @OnPaymentEvent('payout.succeeded', 'payout.failed')
  onPayout(event: PaymentWebhookEvent) {
    this.payouts.push(event);
  }

  @OnPaymentEvent('transfer.succeeded')
  onTransfer(event: PaymentWebhookEvent) {
    this.transfers.push(event);
  }

  @OnPaymentEvent()
  onAny(event: PaymentWebhookEvent) {
    this.all.push(event);
  }

  @OnPaymentEvent('payment.duplicate')
  onDuplicate(event: PaymentDuplicateEvent) {
    this.duplicates.push(event);
  }
}

/** The app's log lines, to check the warnings and that no personal data reaches them. */
class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log = (message: unknown) => this.push('log', message);
  error = (message: unknown) => this.push('error', message);
  warn = (message: unknown) => this.push('warn', message);
  debug = (message: unknown) => this.push('debug', message);
  verbose = (message: unknown) => this.push('verbose', message);
  fatal = (message: unknown) => this.push('fatal', message);

  of(level: string): string[] {
    return this.lines.filter((line) => line.level === level).map((line) => line.message);
  }

  private push(level: string, message: unknown): void {
    this.lines.push({ level, message: String(message) });
  }
}

interface Harness {
  app: INestApplication;
  handlers: Handlers;
  logger: CapturingLogger;
  /** POSTs a delivery to the webhook route. */
  deliver(
    body: unknown,
    init?: { query?: string; contentType?: string; headers?: Record<string, string> | string[][] },
  ): Promise<Response>;
}

let status: StatusServer;
const apps: INestApplication[] = [];

beforeAll(async () => {
  status = await StatusServer.start();
});
beforeEach(() => status.reset());
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(() => status.close());

const paymentsModule = (extras: { name?: string } = {}): DynamicModule =>
  PaymentsModule.forRoot({
    apiUsername: API_USERNAME,
    apiPassword: API_PASSWORD,
    baseUrl: status.url,
    maxRetries: 0,
    ...extras,
  });

/** A second account, registered as `usd`. */
const usdPaymentsModule = (): DynamicModule =>
  PaymentsModule.forRoot({
    name: 'usd',
    apiUsername: 'usd-user',
    apiPassword: 'usd-account-password',
    baseUrl: status.url,
    maxRetries: 0,
  });

async function boot(
  imports: (DynamicModule | (new () => unknown))[],
  providers: Provider[] = [Handlers],
  path = 'webhooks/payments',
  { rawBody = false }: { rawBody?: boolean } = {},
): Promise<Harness> {
  const logger = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({ imports, providers }).compile();
  const app = moduleRef.createNestApplication({ logger, rawBody });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const url = `${await app.getUrl()}/${path}`;
  return {
    app,
    logger,
    handlers: app.get(Handlers),
    deliver: (body, init = {}) =>
      fetch(`${url}${init.query ?? ''}`, {
        method: 'POST',
        headers: [
          ['content-type', init.contentType ?? 'application/json'],
          ...(Array.isArray(init.headers) ? init.headers : Object.entries(init.headers ?? {})),
        ],
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  };
}

/** The two ways to register the webhook module: every behaviour below must hold for both. */
type Registration = (options: PaymentsWebhookModuleOptions) => DynamicModule;

const REGISTRATIONS: [string, Registration][] = [
  ['forRoot', (options) => PaymentsWebhookModule.forRoot(options)],
  [
    'forRootAsync',
    (options) => PaymentsWebhookModule.forRootAsync({ useFactory: () => Promise.resolve(options) }),
  ],
  [
    'forRootAsync (useClass)',
    (options) => {
      @Injectable()
      class WebhookConfig implements PaymentsWebhookOptionsFactory {
        createPaymentsWebhookOptions(): PaymentsWebhookModuleOptions {
          return options;
        }
      }
      return PaymentsWebhookModule.forRootAsync({ useClass: WebhookConfig });
    },
  ],
];

/** The webhook module registered with `register`, confirming through a (not global) `PaymentsModule`. */
const standardWith =
  (register: Registration) =>
  (options: PaymentsWebhookModuleOptions = {}) =>
    boot([paymentsModule(), register(options)]);

describe.each(REGISTRATIONS)('PaymentsWebhookModule.%s', (_method, register) => {
  it.each(Object.entries(EXAMPLES))(
    'confirms the real example %s and dispatches it by kind',
    async (_label, body) => {
      status.settleExamples();
      const { deliver, handlers } = await boot([paymentsModule(), register({})]);

      const response = await deliver(body);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      const event = handlers.all[0];
      expect(event._raw).toEqual(body);
      expect(event.succeeded).toBe(body.success);
      expect(event.kind).toBe(body.transaction_reference.endsWith('eW') ? 'payout' : 'collection');
      expect(event.name).toBe(`${event.kind}.${body.success ? 'succeeded' : 'failed'}`);
      expect(event.confirmation).toMatchObject({
        code: body.transaction_reference,
        transactionDetails: { status: body.success ? 'success' : 'failed' },
      });
      expect(status.requests).toEqual([
        {
          reference: body.transaction_reference,
          authorization: `Basic ${Buffer.from(`${API_USERNAME}:${API_PASSWORD}`).toString('base64')}`,
        },
      ]);
    },
  );

  it('serves the route given as path', async () => {
    status.settleExamples();
    const { deliver, handlers } = await boot(
      [
        paymentsModule(),
        PaymentsWebhookModule.forRootAsync({ path: 'hooks/pay', useFactory: () => ({}) }),
      ],
      [Handlers],
      'hooks/pay',
    );
    expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
    expect(handlers.collections).toHaveLength(1);
  });

  it('fails the boot when two registrations serve one route, however it is written', async () => {
    @Module({ imports: [register({ store: new InMemoryPaymentsWebhookStore() })] })
    class PayrollWebhooks {}
    for (const path of ['webhooks/payments', '/Webhooks/Payments/']) {
      const booting = boot([
        paymentsModule(),
        PayrollWebhooks,
        PaymentsWebhookModule.forRootAsync({ path, useFactory: () => ({}) }),
      ]);
      await expect(booting).rejects.toThrow(
        /Two PaymentsWebhookModule registrations serve the route "\/webhooks\/payments"/,
      );
      await expect(booting).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [expect.objectContaining({ field: 'path', rule: 'isUnique' })],
      });
    }
    await expect(
      boot([
        paymentsModule(),
        PayrollWebhooks,
        PaymentsWebhookModule.forRootAsync({ path: 'hooks/usd', useFactory: () => ({}) }),
      ]),
    ).resolves.toBeDefined();
  });

  it.each(['', '  '])(
    'serves the default route for a blank path %p (an empty variable), never the root',
    async (path) => {
      status.settleExamples();
      const { deliver, app } = await boot([
        paymentsModule(),
        PaymentsWebhookModule.forRoot({ path }),
      ]);
      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      const root = await fetch(`${await app.getUrl()}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(EXAMPLES.kenyaSuccess),
      });
      await root.arrayBuffer();
      expect(root.status).toBe(404);
    },
  );
});

describe('PaymentsWebhookModule', () => {
  describe.each(REGISTRATIONS)('dispatch (%s)', (_how, register) => {
    const standard = standardWith(register);

    it('runs the handlers of the event name and the catch-all ones', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard();

      await deliver(EXAMPLES.kenyaSuccess);
      await deliver(EXAMPLES.panAfricanSuccess);

      expect(handlers.collections.map((e) => e.transactionReference)).toEqual(['9BD103739849eR']);
      expect(handlers.payouts.map((e) => e.transactionReference)).toEqual(['9BD113419309eW']);
      expect(handlers.all).toHaveLength(2);
    });

    it('dispatches transfers, and top-ups and unknown kinds to catch-all handlers only', async () => {
      for (const reference of ['9BD12041887.eS', '9BD120418870eT', 'LEGACY-1']) {
        status.settle(reference, 'success', 5);
      }
      const { deliver, handlers } = await standard();
      const body = (reference: string) => ({
        transaction_reference: reference,
        result_code: 0,
        success: true,
        amount: 5,
      });

      const answers = await Promise.all(
        ['9BD12041887.eS', '9BD120418870eT', 'LEGACY-1'].map(async (r) => {
          const response = await deliver(body(r));
          return [response.status, await response.json()] as const;
        }),
      );

      expect(answers).toEqual([
        [200, { received: true, duplicate: false, handled: 2 }],
        [200, { received: true, duplicate: false, handled: 1 }],
        [200, { received: true, duplicate: false, handled: 1 }],
      ]);
      expect(handlers.transfers.map((e) => e.name)).toEqual(['transfer.succeeded']);
      expect(handlers.all.map((e) => e.kind).sort()).toEqual(['topup', 'transfer', 'unknown']);
    });

    it('reads the idempotency key from the delivery URL, else from forward_url', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard();

      await deliver(EXAMPLES.kenyaSuccess, { query: '?malipo_key=order-42' });
      await deliver({
        ...EXAMPLES.kenyaFailure,
        forward_url: 'https://shop.example/webhooks/payments?malipo_key=order-43',
      });

      expect(handlers.collections.map((e) => e.idempotencyKey)).toEqual(['order-42', 'order-43']);
    });

    it('accepts optional keys of unexpected types: kept in _raw, left out of the event', async () => {
      status.settle('9BD1eR', 'failed', 10);
      const { deliver, handlers } = await standard();
      // Not the amount: the look-up vouches for it, so one that is not a number is refused.
      const body = { transaction_reference: '9BD1eR', remarks: 7, success: 'no', extra: [1] };

      const response = await deliver(body);

      expect(response.status).toBe(200);
      expect(handlers.collections[0]).toMatchObject({ succeeded: false, _raw: body });
      expect(handlers.collections[0].remarks).toBeUndefined();
    });

    it('hands the handlers no credential a delivery echoes, in the event or its _raw', async () => {
      status.settle('9BD1eR', 'failed', 10);
      const { deliver, handlers } = await standard();
      const token = Buffer.from(`${API_USERNAME}:${API_PASSWORD}`).toString('base64');
      const body = {
        transaction_reference: '9BD1eR',
        amount: 10,
        success: false,
        remarks: `pw ${API_PASSWORD} tok ${token}`,
        customer_name: API_PASSWORD,
        extra: { p: API_PASSWORD, [API_PASSWORD]: 1 },
      };

      expect((await deliver(body)).status).toBe(200);
      const seen = JSON.stringify(handlers.collections[0]);
      expect(seen).not.toContain(API_PASSWORD);
      expect(seen).not.toContain(token);
      expect(handlers.collections[0]).toMatchObject({
        transactionReference: '9BD1eR',
        customerName: '[REDACTED]',
        _raw: { extra: { p: '[REDACTED]' } },
      });
    });

    it('acknowledges a repeated delivery without running the handlers again', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard();

      await deliver(EXAMPLES.kenyaSuccess);
      const again = await deliver(EXAMPLES.kenyaSuccess);

      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ received: true, duplicate: true, handled: 0 });
      expect(handlers.collections).toHaveLength(1);
    });

    it('answers 500 when a handler fails, and runs the handlers on the re-delivery', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard();
      handlers.failNext = true;

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(500);
      const again = await deliver(EXAMPLES.kenyaSuccess);

      expect(await again.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      expect(handlers.collections).toHaveLength(1);
    });

    it('runs a handler once when its provider is also reachable through an alias', async () => {
      status.settleExamples();
      const { app, handlers } = await boot(
        [paymentsModule(), PaymentsWebhookModule.forRoot()],
        [Handlers, { provide: 'HANDLERS_ALIAS', useExisting: Handlers }],
      );

      const result = await app
        .get(PaymentsWebhookDispatcher)
        .dispatch(parsePaymentWebhook(EXAMPLES.kenyaSuccess));

      expect(result).toEqual({ duplicate: false, handled: 2 });
      expect(handlers.collections).toHaveLength(1);
    });
  });

  describe.each(REGISTRATIONS)('400 (%s)', (_how, register) => {
    const standard = standardWith(register);

    it.each<[string, unknown]>([
      ['an array body', [EXAMPLES.kenyaSuccess]],
      ['a JSON string body', '"9BD103739849eR"'],
      ['a JSON null body', 'null'],
      ['malformed JSON', '{"transaction_reference": '],
      ['a missing reference', { ...EXAMPLES.kenyaSuccess, transaction_reference: undefined }],
      ['an empty reference', { ...EXAMPLES.kenyaSuccess, transaction_reference: '' }],
      ['a numeric reference', { ...EXAMPLES.kenyaSuccess, transaction_reference: 91037398 }],
      [
        'an overlong reference',
        { ...EXAMPLES.kenyaSuccess, transaction_reference: 'R'.repeat(129) },
      ],
    ])('answers 400 to %s, with no look-up and no handler', async (_label, body) => {
      const { deliver, handlers } = await standard();

      expect((await deliver(body)).status).toBe(400);
      expect(handlers.all).toEqual([]);
      expect(status.requests).toEqual([]);
    });
  });

  describe.each(REGISTRATIONS)('confirmation (%s)', (_how, register) => {
    const standard = standardWith(register);

    it('hands the service record to the handlers as event.confirmation', async () => {
      status.settle('9BD103739849eR', 'success', 10);
      const { deliver, handlers } = await standard();

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections[0].confirmation).toMatchObject({
        code: '9BD103739849eR',
        amount: 10,
        currency: 'KES',
        transactionDetails: { status: 'success' },
      });
    });

    it.each<[string, () => void, unknown]>([
      ['an unknown reference', () => undefined, EXAMPLES.kenyaSuccess],
      [
        'a success the record says failed',
        () => status.settle('9BD103739849eR', 'failed', 10),
        EXAMPLES.kenyaSuccess,
      ],
      [
        'a success the record says cancelled',
        () => status.settle('9BD103739849eR', 'Cancelled', 10),
        EXAMPLES.kenyaSuccess,
      ],
      [
        'a failure the record says succeeded',
        () => status.settle('9BD104311505eR', 'success', 10),
        EXAMPLES.kenyaFailure,
      ],
      [
        'another amount',
        () => status.settle('9BD103739849eR', 'success', 10),
        { ...EXAMPLES.kenyaSuccess, amount: 10000 },
      ],
      [
        'an amount that is not a number',
        () => status.settle('9BD103739849eR', 'success', 10),
        { ...EXAMPLES.kenyaSuccess, amount: '7000000' },
      ],
      ...[undefined, null].map((amount): [string, () => void, unknown] => [
        `an amount the record does not have (${String(amount)})`,
        () => {
          const record = statusRecord('9BD103739849eR', 'success', 10);
          status.answer('9BD103739849eR', { status: 200, body: { ...record, amount } });
        },
        { ...EXAMPLES.kenyaSuccess, amount: 7000000 },
      ]),
      [
        'a success the record says failed, beside an undocumented key that says success',
        () => {
          const record = statusRecord('9BD103739849eR', 'failed', 10);
          const success = { ...record.transaction_details, status: 'success' };
          status.answer('9BD103739849eR', {
            status: 200,
            body: { ...record, transactionDetails: success, transaction__details: success },
          });
        },
        EXAMPLES.kenyaSuccess,
      ],
      [
        'an unknown reference answered 404 in the body of an HTTP 200',
        () =>
          status.answer('9BD103739849eR', {
            status: 200,
            body: { status: 404, success: false, message: 'transaction not found' },
          }),
        EXAMPLES.kenyaSuccess,
      ],
    ])('answers 409 and runs no handler for %s', async (_label, arrange, body) => {
      arrange();
      const { deliver, handlers, logger } = await standard();

      const response = await deliver({ ...(body as object), phone_number: '0712345678' });

      expect(response.status).toBe(409);
      expect(handlers.all).toEqual([]);
      // A contradiction is final: the record is not looked up again.
      expect(status.requests).toHaveLength(1);
      const warnings = logger.of('warn').join('\n');
      expect(warnings).toMatch(/Refused a collection webhook for 9BD\d+eR/);
      expect(warnings).not.toMatch(/0712345678|\+254700000000/);
    });

    it('says in its own values why an event whose result_code and success are strings is no success', async () => {
      status.settle('9BD103739849eR', 'success', 10);
      const { deliver, handlers, logger } = await standard();

      const stringly = { ...EXAMPLES.kenyaSuccess, result_code: '0', success: 'true' };
      expect((await deliver(stringly)).status).toBe(409);
      expect(handlers.all).toEqual([]);
      const warnings = logger.of('warn').join('\n');
      expect(warnings).toContain(
        'the event is no success (result_code "0", success "true"; a success has result_code 0 and success true)',
      );
      expect(warnings).not.toContain('the event failed');
    });

    it('says in its own values why a failure is no success, where the record says success', async () => {
      status.settle(EXAMPLES.kenyaFailure.transaction_reference, 'success', 10);
      const { deliver, logger } = await standard();

      expect((await deliver({ ...EXAMPLES.kenyaFailure, amount: 10 })).status).toBe(409);
      expect(logger.of('warn').join('\n')).toContain(
        'the event is no success (result_code 1, success false; a success has result_code 0 and success true)',
      );
    });

    it.each(['success', 'pending'])(
      'answers 503 and runs no handler when the look-up answers a %s record of another reference',
      async (recordStatus) => {
        status.answer('9BD103739849eR', {
          status: 200,
          body: statusRecord('9BD000000000eR', recordStatus, 10),
        });
        const { deliver, handlers, logger } = await standard();

        expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
        expect(handlers.all).toEqual([]);
        expect(logger.of('warn').join('\n')).toMatch(/Could not confirm/);
      },
    );

    // The service's one documented error shape, a generic 400 (docs/wire-contract.md), says
    // nothing of the reference: refused as unknown, a genuine event would never run its handlers.
    const generic400 = { status: 400, success: false, message: 'could not fetch, try again' };
    it.each([
      ['500', 500, { message: 'down' }],
      ['502', 502, { message: 'down' }],
      ['401', 401, { message: 'down' }],
      ['429', 429, { message: 'down' }],
      ['an HTTP 400', 400, generic400],
      ['a 400 in the body of an HTTP 200', 200, generic400],
    ])(
      'answers 503 and runs no handler when the look-up fails with %s, then handles the re-delivery',
      async (_label, httpStatus, body) => {
        status.answer('9BD103739849eR', { status: httpStatus, body });
        const { deliver, handlers, logger } = await standard();

        expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
        expect(handlers.all).toEqual([]);
        expect(logger.of('warn').join('\n')).toMatch(/Could not confirm/);

        status.settle('9BD103739849eR', 'success', 10);
        expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
        expect(handlers.collections).toHaveLength(1);
        expect(status.requests).toHaveLength(2);
      },
    );

    it('answers 503 when the service cannot be reached', async () => {
      const { deliver, handlers } = await boot([
        PaymentsModule.forRoot({
          apiUsername: API_USERNAME,
          apiPassword: API_PASSWORD,
          baseUrl: 'http://127.0.0.1:9',
          maxRetries: 0,
        }),
        PaymentsWebhookModule.forRoot(),
      ]);

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
      expect(handlers.all).toEqual([]);
    });

    it('refuses a forged success, then runs the handlers for the genuine delivery', async () => {
      // The payment is still pending when the forger posts its "success": not yet judged.
      status.settle('9BD103739849eR', 'pending', 10);
      const { deliver, handlers } = await standard({ pendingRecheckDelaysMs: [1] });

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
      expect((await deliver({ ...EXAMPLES.kenyaSuccess, amount: 1 })).status).toBe(503);
      expect(handlers.all).toEqual([]);

      status.settle('9BD103739849eR', 'success', 10);
      expect((await deliver({ ...EXAMPLES.kenyaSuccess, amount: 1 })).status).toBe(409);
      const genuine = await deliver(EXAMPLES.kenyaSuccess);

      expect(genuine.status).toBe(200);
      expect(await genuine.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      expect(handlers.collections).toHaveLength(1);
    });

    it('does not let a concurrent forged copy shadow the genuine delivery', async () => {
      status.settle('9BD103739849eR', 'success', 10);
      const { deliver, handlers } = await standard();

      const [forged, genuine] = await Promise.all([
        deliver({ ...EXAMPLES.kenyaSuccess, amount: 1 }),
        deliver(EXAMPLES.kenyaSuccess),
      ]);

      expect([forged.status, genuine.status]).toEqual([409, 200]);
      expect(handlers.collections).toHaveLength(1);
      expect(handlers.collections[0].amount).toBe(10);
    });

    it('uses the TransactionsService of a PaymentsModule that is neither global nor exported here', async () => {
      @Module({ imports: [paymentsModule()] })
      class BillingModule {}
      status.settleExamples();
      const { deliver, handlers } = await boot([BillingModule, PaymentsWebhookModule.forRoot()]);

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });

    it('uses the named registration given as account', async () => {
      status.settleExamples();
      const { deliver, handlers } = await boot([
        paymentsModule({ name: 'kes' }),
        PaymentsWebhookModule.forRoot({ account: 'kes' }),
      ]);

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections[0].confirmation?.code).toBe('9BD103739849eR');
    });

    it('mounts one route per account, each confirming with its own registration', async () => {
      status.settleExamples();
      const { app, handlers } = await boot([
        paymentsModule({ name: 'kes' }),
        usdPaymentsModule(),
        PaymentsWebhookModule.forRoot({ account: 'kes', path: 'webhooks/kes' }),
        PaymentsWebhookModule.forRoot({ account: 'usd', path: 'webhooks/usd' }),
      ]);
      const base = await app.getUrl();
      const post = (path: string, body: unknown) =>
        fetch(`${base}/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });

      expect((await post('webhooks/kes', EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect((await post('webhooks/usd', EXAMPLES.panAfricanSuccess)).status).toBe(200);
      // Each event ran the app's handlers once, confirmed with the credentials of its route's account.
      expect(handlers.all).toHaveLength(2);
      const basic = (user: string, password: string) =>
        `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      expect(status.requests.map((request) => request.authorization)).toEqual([
        basic(API_USERNAME, API_PASSWORD),
        basic('usd-user', 'usd-account-password'),
      ]);
    });

    it('confirms with the unnamed registration when no account is given, beside a named one', async () => {
      status.settleExamples();
      const { deliver, handlers } = await boot([
        paymentsModule(),
        // Imported after: Nest's lookup by class would answer its TransactionsService.
        usdPaymentsModule(),
        PaymentsWebhookModule.forRoot(),
      ]);

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.all).toHaveLength(1);
      expect(status.requests.map((request) => request.authorization)).toEqual([
        `Basic ${Buffer.from(`${API_USERNAME}:${API_PASSWORD}`).toString('base64')}`,
      ]);
    });

    it('fails at boot without a PaymentsModule to confirm with', async () => {
      await expect(boot([PaymentsWebhookModule.forRoot()])).rejects.toThrow(
        /confirms webhooks with the TransactionsService of the PaymentsModule/,
      );
    });

    it('fails at boot when the account names no registration', async () => {
      await expect(
        boot([paymentsModule(), PaymentsWebhookModule.forRoot({ account: 'usd' })]),
      ).rejects.toThrow(/PaymentsModule registration named "usd"/);
    });

    it('with confirm: false, dispatches without a look-up and warns at boot', async () => {
      const { deliver, handlers, logger } = await boot([
        PaymentsWebhookModule.forRoot({ confirm: false }),
      ]);

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections[0].confirmation).toBeUndefined();
      expect(status.requests).toEqual([]);
      expect(logger.of('warn').join('\n')).toMatch(/confirmation is off/);
    });

    it("with confirm: false, still keeps the registration's credentials out of the events", async () => {
      const { deliver, handlers } = await boot([
        paymentsModule(),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);

      const echoing = { ...EXAMPLES.kenyaSuccess, remarks: `tok ${API_PASSWORD}` };
      expect((await deliver(echoing)).status).toBe(200);
      expect(handlers.collections[0]._raw).toMatchObject({ remarks: 'tok [REDACTED]' });
      expect(status.requests).toEqual([]);
    });

    it.each([
      ['in clear', API_PASSWORD],
      ['percent-encoded', encodeURIComponent(`${API_PASSWORD}/x`)],
    ])('keeps the credentials out of the malipo_key of the delivery URL (%s)', async (_, key) => {
      const { deliver, handlers } = await boot([
        paymentsModule(),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);
      const delivered = await deliver(EXAMPLES.kenyaSuccess, { query: `?malipo_key=order-${key}` });
      expect(delivered.status).toBe(200);
      const keys = handlers.collections.map((event) => event.idempotencyKey);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^order-\[REDACTED\]/);
      expect(keys[0]).not.toContain(API_PASSWORD);
    });

    it("with confirm: false, keeps every account's credentials out of the events of one route", async () => {
      const { deliver, handlers } = await boot([
        paymentsModule({ name: 'kes' }),
        usdPaymentsModule(),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);

      const echoing = {
        ...EXAMPLES.kenyaSuccess,
        remarks: `kes ${API_PASSWORD} usd usd-account-password`,
      };
      expect((await deliver(echoing)).status).toBe(200);
      expect(handlers.collections[0]._raw).toMatchObject({
        remarks: 'kes [REDACTED] usd [REDACTED]',
      });
    });

    it("with confirm: false, redacts the whole of a password that holds another account's", async () => {
      const { deliver, handlers } = await boot([
        paymentsModule(),
        PaymentsModule.forRoot({
          name: 'usd',
          apiUsername: 'usd-user',
          apiPassword: `${API_PASSWORD}-usd-2026`,
          baseUrl: status.url,
          maxRetries: 0,
        }),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);

      const echoing = { ...EXAMPLES.kenyaSuccess, remarks: `usd ${API_PASSWORD}-usd-2026` };
      expect((await deliver(echoing)).status).toBe(200);
      expect(handlers.collections[0]._raw).toMatchObject({ remarks: 'usd [REDACTED]' });
    });

    it("with confirm: false, redacts the other accounts beside a request-scoped one, and says it cannot redact that one's", async () => {
      const { deliver, handlers, logger } = await boot([
        paymentsModule(),
        PaymentsModule.forRootAsync({
          name: 'tenant',
          inject: [REQUEST],
          useFactory: () => ({ apiUsername: 'tenant-user', apiPassword: 'tenant-password-1' }),
        }),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);

      const echoing = { ...EXAMPLES.kenyaSuccess, remarks: `tok ${API_PASSWORD}` };
      expect((await deliver(echoing)).status).toBe(200);
      expect(handlers.collections[0]._raw).toMatchObject({ remarks: 'tok [REDACTED]' });
      expect(logger.of('error').join('\n')).toMatch(
        /registration "tenant" is request-scoped or transient: its credentials are made per request/,
      );
    });

    it('with confirm: false, redacts the credentials of a registration loaded lazily after boot', async () => {
      @Module({
        imports: [
          PaymentsModule.forRoot({
            name: 'lazy',
            apiUsername: 'lazy-user',
            apiPassword: 'lazy-account-password',
            baseUrl: status.url,
          }),
        ],
      })
      class LazyPaymentsModule {}
      const { app, deliver, handlers } = await boot([
        paymentsModule(),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);
      await app.get(LazyModuleLoader).load(() => LazyPaymentsModule);

      const echoing = { ...EXAMPLES.kenyaSuccess, remarks: 'tok lazy-account-password' };
      expect((await deliver(echoing)).status).toBe(200);
      expect(handlers.collections[0]._raw).toMatchObject({ remarks: 'tok [REDACTED]' });
    });

    it('answers deliveries while a registration is being loaded lazily, its options not resolved yet', async () => {
      let resolveOptions!: () => void;
      const vault = new Promise<void>((resolve) => (resolveOptions = resolve));
      @Module({
        imports: [
          PaymentsModule.forRootAsync({
            name: 'lazy',
            // Options read from a vault, which takes a moment.
            useFactory: async () => {
              await vault;
              return { apiUsername: 'lazy-user', apiPassword: 'lazy-account-password' };
            },
          }),
        ],
      })
      class LazyPaymentsModule {}
      const { app, deliver, handlers } = await boot([
        paymentsModule(),
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);
      const modules = app.get(ModulesContainer);
      const before = modules.size;
      const loading = app.get(LazyModuleLoader).load(() => LazyPaymentsModule);
      // Its modules are in the app, its providers not built: their options wait for the vault.
      await waitFor(() => (modules.size > before ? true : undefined), 'the lazy modules scanned');

      const during = { ...EXAMPLES.kenyaSuccess, remarks: `tok ${API_PASSWORD}` };
      expect((await deliver(during)).status).toBe(200);
      expect(handlers.collections[0]._raw).toMatchObject({ remarks: 'tok [REDACTED]' });
      resolveOptions();
      await loading;
      const after = {
        ...EXAMPLES.kenyaSuccess,
        // Another transaction: the first is handled already.
        transaction_reference: '9BD103739850eR',
        remarks: 'tok lazy-account-password',
      };
      expect((await deliver(after)).status).toBe(200);
      expect(handlers.collections[1]._raw).toMatchObject({ remarks: 'tok [REDACTED]' });
    });

    it('fails at boot, saying why, when the registration to confirm with is request-scoped', async () => {
      await expect(
        boot([
          PaymentsModule.forRootAsync({
            inject: [REQUEST],
            useFactory: () => ({ apiUsername: 'tenant-user', apiPassword: 'tenant-password-1' }),
          }),
          PaymentsWebhookModule.forRoot(),
        ]),
      ).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [expect.objectContaining({ field: 'inject', rule: 'isStatic' })],
      });
    });

    it('with confirm: false, fails at boot when the account names no registration', async () => {
      await expect(
        boot([
          paymentsModule(),
          PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true, account: 'usd' }),
        ]),
      ).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [expect.objectContaining({ field: 'account', rule: 'isRegistered' })],
      });
    });

    it('with confirm: false and a verify hook, does not warn', async () => {
      const { logger } = await boot([
        PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true }),
      ]);
      expect(logger.of('warn')).toEqual([]);
    });
  });

  describe.each(REGISTRATIONS)('verify (%s)', (_how, register) => {
    const standard = standardWith(register);

    it('answers 401 and runs nothing when verify rejects the delivery', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard({
        verify: ({ headers }) => headers['x-webhook-secret'] === 'shared-secret',
      });

      const refused = await deliver(EXAMPLES.kenyaSuccess, {
        headers: { 'x-webhook-secret': 'no' },
      });
      expect(refused.status).toBe(401);
      expect(handlers.all).toEqual([]);
      const accepted = await deliver(EXAMPLES.kenyaSuccess, {
        headers: { 'x-webhook-secret': 'shared-secret' },
      });
      expect(accepted.status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });
  });

  describe.each(REGISTRATIONS)('records not final yet (%s)', (_how, register) => {
    const standard = standardWith(register);
    /** Short waits: what is tested is the number of look-ups and the answer, not the delays. */
    const pendingRecheckDelaysMs = [1, 2, 3];

    it('confirms a success the service settles while it is re-checked, and runs the handlers once', async () => {
      status.settleInTurn('9BD103739849eR', ['pending', 'processing', 'success'], 10);
      const { deliver, handlers, logger } = await standard({ pendingRecheckDelaysMs });

      const response = await deliver(EXAMPLES.kenyaSuccess);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      expect(status.requests).toHaveLength(3);
      expect(handlers.collections).toHaveLength(1);
      expect(handlers.collections[0].confirmation?.transactionDetails.status).toBe('success');
      expect(logger.of('warn')).toEqual([]);
    });

    it('answers 503 while the record stays pending, and runs the handlers once on a later delivery', async () => {
      status.settle('9BD103739849eR', 'pending', 10);
      const { deliver, handlers, logger } = await standard({ pendingRecheckDelaysMs });

      const early = await deliver({ ...EXAMPLES.kenyaSuccess, phone_number: '0712345678' });

      expect(early.status).toBe(503);
      expect(handlers.collectionCalls).toBe(0);
      // The first look-up and one after each wait.
      expect(status.requests).toHaveLength(4);
      const warnings = logger.of('warn').join('\n');
      expect(warnings).toMatch(
        /Deferred a collection webhook for 9BD103739849eR: .*not final \("pending"\) after 4 look-up/,
      );
      expect(warnings).not.toMatch(/0712345678|\+254700000000|Successfully processes/);

      status.settle('9BD103739849eR', 'success', 10);
      const later = await deliver(EXAMPLES.kenyaSuccess);
      const again = await deliver(EXAMPLES.kenyaSuccess);

      expect(await later.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      expect(await again.json()).toEqual({ received: true, duplicate: true, handled: 0 });
      expect(handlers.collections).toHaveLength(1);
    });

    it.each<[string, (reference: string) => void, unknown]>([
      [
        'a failure the record says pending',
        (r) => status.settle(r, 'pending', 10),
        EXAMPLES.kenyaFailure,
      ],
      ['a record that is queued', (r) => status.settle(r, 'QUEUED', 10), EXAMPLES.kenyaFailure],
      [
        "a success whose record reads SUCCESS (the service's word for accepted)",
        () => status.settle('9BD103739849eR', 'SUCCESS', 10),
        EXAMPLES.kenyaSuccess,
      ],
      ['a record with an empty status', (r) => status.settle(r, '', 10), EXAMPLES.kenyaFailure],
      [
        'a record without a status',
        (r) => {
          const record = statusRecord(r, 'pending', 10);
          const { status: _status, ...details } = record.transaction_details;
          status.answer(r, { status: 200, body: { ...record, transaction_details: details } });
        },
        EXAMPLES.kenyaFailure,
      ],
      [
        'a record of another amount (judged once final)',
        (r) => status.settle(r, 'pending', 99),
        EXAMPLES.kenyaFailure,
      ],
    ])('answers 503 and runs no handler for %s', async (_label, arrange, body) => {
      arrange('9BD104311505eR');
      const { deliver, handlers } = await standard({ pendingRecheckDelaysMs });

      expect((await deliver(body)).status).toBe(503);
      expect(handlers.all).toEqual([]);
      expect(status.requests).toHaveLength(4);
    });

    it('with pendingRecheckDelaysMs: [], answers 503 after one look-up', async () => {
      status.settle('9BD103739849eR', 'pending', 10);
      const { deliver, handlers } = await standard({ pendingRecheckDelaysMs: [] });

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
      expect(status.requests).toHaveLength(1);
      expect(handlers.all).toEqual([]);
    });

    it('re-checks with the default schedule when none is given', async () => {
      status.settleInTurn('9BD103739849eR', ['pending', 'success'], 10);
      const { deliver, handlers } = await standard();

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(status.requests).toHaveLength(2);
      expect(handlers.collections).toHaveLength(1);
    });

    it('looks a copy that comes after a deferred delivery up on its own', async () => {
      status.settle('9BD103739849eR', 'pending', 10);
      const { deliver, handlers } = await standard({ pendingRecheckDelaysMs: [1] });

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);

      expect(status.requests).toHaveLength(4);
      expect(handlers.all).toEqual([]);
    });

    it('answers copies that come while a record is re-checked with its look-ups, not one schedule each', async () => {
      status.settle('9BD103739849eR', 'pending', 10);
      const { app, deliver, handlers } = await standard({ pendingRecheckDelaysMs });
      const confirmation = app.get(PaymentsWebhookConfirmation, { strict: false });
      const confirm = confirmation.confirm.bind(confirmation);
      let confirming = 0;
      jest.spyOn(confirmation, 'confirm').mockImplementation((event) => {
        confirming += 1;
        return confirm(event);
      });
      const release = status.hold();

      // The genuine delivery, and forged copies of it as a flood of them would come.
      const answers = [
        deliver(EXAMPLES.kenyaSuccess),
        ...Array.from({ length: 39 }, (_, i) =>
          deliver({ ...EXAMPLES.kenyaSuccess, amount: 1 + i }),
        ),
      ];
      while (confirming < 40 || status.requests.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      release();

      expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual(
        Array(40).fill(503),
      );
      // The first look-up and one after each wait, shared by all 40.
      expect(status.requests).toHaveLength(4);
      expect(handlers.all).toEqual([]);

      status.settle('9BD103739849eR', 'success', 10);
      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });

    it.each<[string, unknown]>([
      ['a negative delay', [250, -1]],
      ['a fraction', [1.5]],
      ['NaN', [Number.NaN]],
      ['a string', ['250']],
      ['a number instead of an array', 250],
    ])('fails at boot with pendingRecheckDelaysMs holding %s', async (_label, delays) => {
      await expect(
        boot([
          register({
            confirm: false,
            verify: () => true,
            pendingRecheckDelaysMs: delays as number[],
          }),
        ]),
      ).rejects.toThrow(/pendingRecheckDelaysMs must be an array of non-negative integers \(ms\)/);
    });

    it.each([
      ['a misspelt option', { confrim: false }, 'confrim', 'whitelist', /confrim is not an option/],
      [
        'unjournaledEvents outside its choices',
        { unjournaledEvents: 'Refuse' },
        'unjournaledEvents',
        'isIn',
        /unjournaledEvents must be one of "confirm", "refuse"/,
      ],
      [
        'confirm as text',
        { confirm: 'false' },
        'confirm',
        'isIn',
        /confirm must be one of true, false/,
      ],
      [
        'leaseMs of 0',
        { leaseMs: 0 },
        'leaseMs',
        'isPositiveInteger',
        /leaseMs must be a positive/,
      ],
    ])(
      'fails at boot with %s, naming the option and its rule',
      async (_label, options, field, rule, message) => {
        const error: unknown = await boot([
          paymentsModule(),
          register(options as unknown as Parameters<typeof register>[0]),
        ]).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect(error).toMatchObject({
          target: 'PaymentsWebhookModuleOptions',
          errors: [expect.objectContaining({ field, rule })],
        });
        expect((error as Error).message).toMatch(message);
      },
    );
  });

  describe.each(REGISTRATIONS)('signed deliveries (%s)', (_how, register) => {
    const SECRET = 'whsec_malipo_spec_1';
    /**
     * HMAC-SHA256 of the recorded kenya-success example as the Connect product signs it (top-level
     * keys sorted, no spaces), with SECRET: computed with Python's `json.dumps(sort_keys=True,
     * separators=(',', ':'))` and `openssl dgst -sha256 -hmac`, not with the code under test.
     */
    const KENYA_SUCCESS_SIGNATURE =
      '4b22671f3d533099034929c1b846b8133733d4b852917e0e1e7966bda2fd7703';

    /** The hex HMAC-SHA256 of `text` with `secret`. */
    const hmac = (secret: string, text: string | Buffer) =>
      createHmac('sha256', secret).update(text).digest('hex');
    /** The signature of `body` as the Connect product makes it: over its keys in sorted order. */
    const connectSignature = (secret: string, body: Record<string, unknown>) =>
      hmac(
        secret,
        JSON.stringify(
          Object.fromEntries(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : 1))),
        ),
      );

    const signed = (
      options: Parameters<typeof verifyPaymentsSignature>[0],
      { rawBody = true }: { rawBody?: boolean } = {},
    ) =>
      boot(
        [paymentsModule(), register({ verify: verifyPaymentsSignature(options) })],
        [Handlers],
        'webhooks/payments',
        { rawBody },
      );

    it('accepts the recorded example with its Connect signature, sent as recorded', async () => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: SECRET });

      // The recorded key order, not the signed (sorted) one: the signature covers the content.
      const response = await deliver(JSON.stringify(EXAMPLES.kenyaSuccess), {
        headers: { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE },
      });

      expect(response.status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
      expect(connectSignature(SECRET, EXAMPLES.kenyaSuccess)).toBe(KENYA_SUCCESS_SIGNATURE);
    });

    it('accepts the signature in upper case and the Connect form with other spacing and key order', async () => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: SECRET });
      const reordered = Object.fromEntries(Object.entries(EXAMPLES.kenyaSuccess).reverse());

      const response = await deliver(JSON.stringify(reordered, null, 2), {
        headers: { 'X-Payd-Connect-Signature': KENYA_SUCCESS_SIGNATURE.toUpperCase() },
      });

      expect(response.status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });

    it.each<[string, Record<string, string> | string[][]]>([
      ['no signature', {}],
      [
        'a signature made with another secret',
        { 'x-payd-connect-signature': connectSignature('other-secret', EXAMPLES.kenyaSuccess) },
      ],
      [
        'one changed digit',
        { 'x-payd-connect-signature': `${KENYA_SUCCESS_SIGNATURE.slice(0, -1)}8` },
      ],
      [
        'a truncated signature',
        { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE.slice(0, 62) },
      ],
      [
        'a signature with a byte more',
        { 'x-payd-connect-signature': `${KENYA_SUCCESS_SIGNATURE}00` },
      ],
      [
        'a signature that is not hex',
        { 'x-payd-connect-signature': `${KENYA_SUCCESS_SIGNATURE.slice(0, 62)}zz` },
      ],
      ['a prefixed signature', { 'x-payd-connect-signature': `sha256=${KENYA_SUCCESS_SIGNATURE}` }],
      [
        'the signature sent twice',
        [
          ['x-payd-connect-signature', KENYA_SUCCESS_SIGNATURE],
          ['x-payd-connect-signature', KENYA_SUCCESS_SIGNATURE],
        ],
      ],
      ['the signature in another header', { 'x-payd-signature': KENYA_SUCCESS_SIGNATURE }],
    ])('answers 401 to %s: no look-up, no handler', async (_label, headers) => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: SECRET });

      expect((await deliver(EXAMPLES.kenyaSuccess, { headers })).status).toBe(401);
      expect(handlers.all).toEqual([]);
      expect(status.requests).toEqual([]);
    });

    it('answers 401 to a body whose content changed after signing', async () => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: SECRET });

      const response = await deliver(
        { ...EXAMPLES.kenyaSuccess, amount: 10000 },
        { headers: { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE } },
      );

      expect(response.status).toBe(401);
      expect(handlers.all).toEqual([]);
      expect(status.requests).toEqual([]);
    });

    it('answers 401 to a body nested deeper than JSON.stringify can write, logging no error', async () => {
      const { deliver, handlers, logger } = await signed({ secrets: SECRET });
      const depth = 20_000;
      const body = `{"transaction_reference":"9BD1eR","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;

      const response = await deliver(body, {
        headers: { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE },
      });

      expect(response.status).toBe(401);
      expect(handlers.all).toEqual([]);
      expect(logger.of('error')).toEqual([]);
    });

    it('accepts each secret of a rotation, and no other', async () => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: ['old-secret', 'new-secret'] });
      const post = (secret: string, body: Record<string, unknown>) =>
        deliver(body, { headers: { 'x-payd-connect-signature': connectSignature(secret, body) } });

      expect((await post('old-secret', EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect((await post('new-secret', EXAMPLES.panAfricanSuccess)).status).toBe(200);
      expect((await post('retired-secret', EXAMPLES.kenyaFailure)).status).toBe(401);

      expect(handlers.all.map((e) => e.transactionReference)).toEqual([
        '9BD103739849eR',
        '9BD113419309eW',
      ]);
    });

    it('reads the header given as header, in any case', async () => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: SECRET, header: 'X-Shop-Signature' });

      const wrongHeader = await deliver(EXAMPLES.kenyaSuccess, {
        headers: { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE },
      });
      const rightHeader = await deliver(EXAMPLES.kenyaSuccess, {
        headers: { 'x-shop-signature': KENYA_SUCCESS_SIGNATURE },
      });

      expect([wrongHeader.status, rightHeader.status]).toEqual([401, 200]);
      expect(handlers.collections).toHaveLength(1);
    });

    it("with signedBody: 'raw', accepts the exact bytes only", async () => {
      status.settleExamples();
      const { deliver, handlers } = await signed({ secrets: SECRET, signedBody: 'raw' });
      const text = JSON.stringify(EXAMPLES.kenyaSuccess);
      const signature = hmac(SECRET, Buffer.from(text));
      const post = (body: string) =>
        deliver(body, { headers: { 'x-payd-connect-signature': signature } });

      expect((await post(`${text} `)).status).toBe(401);
      expect((await post(text.replace('"amount":10', '"amount": 10'))).status).toBe(401);
      expect((await post(JSON.stringify(EXAMPLES.kenyaSuccess, null, 1))).status).toBe(401);
      // The Connect form of the same body is not these bytes.
      expect(
        (
          await deliver(text, {
            headers: { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE },
          })
        ).status,
      ).toBe(401);
      expect(handlers.all).toEqual([]);
      expect(status.requests).toEqual([]);

      expect((await post(text)).status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });

    it('refuses every delivery, and logs once why, when the app was created without rawBody', async () => {
      status.settleExamples();
      const { deliver, handlers, logger } = await signed({ secrets: SECRET }, { rawBody: false });
      const headers = { 'x-payd-connect-signature': KENYA_SUCCESS_SIGNATURE };

      expect((await deliver(EXAMPLES.kenyaSuccess, { headers })).status).toBe(401);
      expect((await deliver(EXAMPLES.kenyaSuccess, { headers })).status).toBe(401);

      expect(handlers.all).toEqual([]);
      expect(status.requests).toEqual([]);
      const errors = logger.of('error');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/no raw body.*rawBody: true/);
      expect(errors[0]).not.toContain(SECRET);
    });

    it('fails at boot when the options factory gives an empty secret, without echoing the others', async () => {
      await expect(
        boot([
          paymentsModule(),
          PaymentsWebhookModule.forRootAsync({
            useFactory: () => ({
              verify: verifyPaymentsSignature({ secrets: ['kept-secret-value', ''] }),
            }),
          }),
        ]),
      ).rejects.toThrow(/^verifyPaymentsSignature: secret 2 of 2 is empty$/);
    });
  });

  describe.each(REGISTRATIONS)('money safety (%s)', (_how, register) => {
    const standard = standardWith(register);

    it.each([
      [
        'form-encoded',
        'application/x-www-form-urlencoded',
        'transaction_reference=9BD103739849eR&result_code=0&success=true',
      ],
      ['text/plain', 'text/plain', JSON.stringify(EXAMPLES.kenyaSuccess)],
      ['multipart', 'multipart/form-data; boundary=x', '--x--'],
    ])('answers 415 to a %s delivery and runs no handler', async (_label, contentType, body) => {
      status.settleExamples();
      const { deliver, handlers } = await standard();

      expect((await deliver(body, { contentType })).status).toBe(415);
      expect(handlers.all).toEqual([]);
      expect(status.requests).toEqual([]);
    });

    it('accepts application/json with a charset', async () => {
      status.settleExamples();
      const { deliver } = await standard();
      const response = await deliver(EXAMPLES.kenyaSuccess, {
        contentType: 'Application/JSON; charset=utf-8',
      });
      expect(response.status).toBe(200);
    });

    it('runs the handlers once for concurrent copies that all succeed', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard();
      handlers.delayMs = 100;

      const responses = await Promise.all([1, 2, 3].map(() => deliver(EXAMPLES.kenyaSuccess)));

      expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(handlers.collectionCalls).toBe(1);
    });

    it('does not acknowledge a concurrent copy while the first delivery fails', async () => {
      status.settleExamples();
      const { deliver, handlers } = await standard();
      handlers.delayMs = 300;
      handlers.failNext = true;

      const first = deliver(EXAMPLES.kenyaSuccess);
      // The copy is sent once the first delivery's handler is running.
      while (handlers.collectionCalls === 0) await new Promise((r) => setTimeout(r, 5));
      const copy = await deliver(EXAMPLES.kenyaSuccess);

      expect((await first).status).toBe(500);
      expect(copy.status).toBe(503);
      expect(handlers.collectionCalls).toBe(1);
      expect(handlers.collections).toEqual([]);

      handlers.delayMs = 0;
      const redelivery = await deliver(EXAMPLES.kenyaSuccess);
      expect(await redelivery.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      expect(handlers.collections).toHaveLength(1);
    });

    it('raises payment.duplicate when one idempotency key settles two references', async () => {
      status.settle('9BD200000001eW', 'success', 500);
      status.settle('9BD200000002eW', 'success', 500);
      const { deliver, handlers, logger } = await standard();
      const payout = (reference: string) => ({
        transaction_reference: reference,
        result_code: 0,
        success: true,
        amount: 500,
        phone_number: '0712345678',
      });

      await deliver(payout('9BD200000001eW'), { query: '?malipo_key=payout-7' });
      expect(handlers.duplicates).toEqual([]);
      await deliver(payout('9BD200000002eW'), { query: '?malipo_key=payout-7' });
      await deliver(payout('9BD200000002eW'), { query: '?malipo_key=payout-7' });

      expect(handlers.payouts).toHaveLength(2);
      expect(handlers.duplicates).toHaveLength(1);
      expect(handlers.duplicates[0]).toMatchObject({
        name: 'payment.duplicate',
        idempotencyKey: 'payout-7',
        references: ['9BD200000001eW', '9BD200000002eW'],
        event: { transactionReference: '9BD200000002eW' },
      });
      const errors = logger.of('error').join('\n');
      expect(errors).toMatch(
        /payout-7 was executed more than once: .*9BD200000001eW, 9BD200000002eW/,
      );
      expect(errors).not.toMatch(/0712345678/);
      // Catch-all handlers receive outcomes, not the alarm.
      expect(handlers.all.map((e) => e.transactionReference)).toEqual([
        '9BD200000001eW',
        '9BD200000002eW',
      ]);
    });

    it('does not raise payment.duplicate for a refused event', async () => {
      status.settle('9BD200000001eW', 'success', 500);
      const { deliver, handlers } = await standard();
      const body = { transaction_reference: '9BD200000001eW', result_code: 0, success: true };

      await deliver(body, { query: '?malipo_key=payout-8' });
      const forged = await deliver(
        { ...body, transaction_reference: '9BD299999999eW' },
        { query: '?malipo_key=payout-8' },
      );

      expect(forged.status).toBe(409);
      expect(handlers.duplicates).toEqual([]);
    });

    it('journals references in the store given as an option', async () => {
      status.settleExamples();
      const store = new InMemoryPaymentsWebhookStore();
      const { deliver } = await standard({ store });

      await deliver(EXAMPLES.kenyaSuccess, { query: '?malipo_key=order-9' });

      expect(store.claim('9BD103739849eR:succeeded', 1000)).toBe('done');
      expect(store.recordReference('order-9', '9BD103739849eR')).toEqual(['9BD103739849eR']);
    });

    it('fails at boot with a store that cannot journal references', async () => {
      const store = {
        claim: () => 'claimed' as const,
        complete: () => undefined,
        release: () => undefined,
      };
      await expect(
        boot([
          PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true, store } as never),
        ]),
      ).rejects.toThrow(/recordReference/);
    });
  });

  describe.each(REGISTRATIONS)('store (%s)', (_how, register) => {
    const standard = standardWith(register);

    /** The default store's behaviour, with its calls recorded and failures on demand. */
    class RecordingStore implements PaymentsWebhookStore {
      readonly calls: string[] = [];
      /** Methods that throw, as an unreachable Redis does. */
      readonly failing = new Set<string>();
      /** Answer of the next claims instead of the store's. */
      claimAnswer?: PaymentsWebhookClaim;
      closed = 0;
      private readonly inner = new InMemoryPaymentsWebhookStore();

      claim(key: string, leaseMs: number): Promise<PaymentsWebhookClaim> {
        return this.call(
          `claim ${key} ${leaseMs}`,
          () => this.claimAnswer ?? this.inner.claim(key, leaseMs),
        );
      }
      complete(key: string): Promise<void> {
        return this.call(`complete ${key}`, () => this.inner.complete(key));
      }
      release(key: string): Promise<void> {
        return this.call(`release ${key}`, () => this.inner.release(key));
      }
      recordReference(idempotencyKey: string, reference: string): Promise<readonly string[]> {
        return this.call(`recordReference ${idempotencyKey} ${reference}`, () =>
          this.inner.recordReference(idempotencyKey, reference),
        );
      }
      close(): void {
        this.closed += 1;
      }

      private async call<T>(call: string, run: () => T): Promise<T> {
        this.calls.push(call);
        await Promise.resolve();
        if (this.failing.has(call.split(' ')[0])) throw new Error('connect ECONNREFUSED');
        return run();
      }
    }

    it('claims with the lease, then completes, and answers the next copy as a duplicate', async () => {
      status.settleExamples();
      const store = new RecordingStore();
      const { deliver, handlers } = await standard({ store, leaseMs: 1234 });

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      const again = await deliver(EXAMPLES.kenyaSuccess);

      expect(await again.json()).toEqual({ received: true, duplicate: true, handled: 0 });
      expect(store.calls).toEqual([
        'claim 9BD103739849eR:succeeded 1234',
        'complete 9BD103739849eR:succeeded',
        'claim 9BD103739849eR:succeeded 1234',
      ]);
      expect(handlers.collections).toHaveLength(1);
    });

    it('answers 503 and runs no handler while another delivery holds the claim', async () => {
      status.settleExamples();
      const store = new RecordingStore();
      store.claimAnswer = 'busy';
      const { deliver, handlers } = await standard({ store });

      const busy = await deliver(EXAMPLES.kenyaSuccess);

      expect(busy.status).toBe(503);
      expect(((await busy.json()) as { message: string }).message).toMatch(/another delivery/);
      expect(handlers.collectionCalls).toBe(0);
      expect(store.calls).toEqual(['claim 9BD103739849eR:succeeded 30000']);

      store.claimAnswer = undefined;
      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });

    it('answers 503 and runs no handler when the store fails, then handles the re-delivery', async () => {
      status.settleExamples();
      const store = new RecordingStore();
      store.failing.add('claim');
      const { deliver, handlers, logger } = await standard({ store });

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(503);
      expect(handlers.collectionCalls).toBe(0);
      expect(logger.of('warn').join('\n')).toMatch(/webhook store failed \(claim\)/);

      store.failing.clear();
      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
    });

    it('answers 503 and releases the claim when the journal fails', async () => {
      status.settleExamples();
      const store = new RecordingStore();
      store.failing.add('recordReference');
      const { deliver, handlers } = await standard({ store });

      expect((await deliver(EXAMPLES.kenyaSuccess, { query: '?malipo_key=k-1' })).status).toBe(503);

      expect(handlers.collectionCalls).toBe(0);
      expect(store.calls.slice(-1)).toEqual(['release 9BD103739849eR:succeeded']);
    });

    it('releases the claim when a handler fails, and does not complete it', async () => {
      status.settleExamples();
      const store = new RecordingStore();
      const { deliver, handlers } = await standard({ store });
      handlers.failNext = true;

      expect((await deliver(EXAMPLES.kenyaSuccess)).status).toBe(500);

      expect(store.calls).toEqual([
        'claim 9BD103739849eR:succeeded 30000',
        'release 9BD103739849eR:succeeded',
      ]);
    });

    it('acknowledges a delivery whose handlers ran although the store could not mark it done', async () => {
      status.settleExamples();
      const store = new RecordingStore();
      store.failing.add('complete');
      const { deliver, handlers, logger } = await standard({ store });

      const response = await deliver(EXAMPLES.kenyaSuccess);

      // A 503 would bring a re-delivery that, once the lease ended, ran the handlers again.
      expect(response.status).toBe(200);
      expect(handlers.collections).toHaveLength(1);
      expect(store.calls.filter((call) => call.startsWith('complete'))).toHaveLength(3);
      expect(logger.of('error').join('\n')).toMatch(
        /handlers of 9BD103739849eR:succeeded ran but the store could not mark it processed/,
      );
    });

    it('raises payment.duplicate once although its claim is asked for by each copy', async () => {
      status.settle('9BD200000001eW', 'success', 500);
      status.settle('9BD200000002eW', 'success', 500);
      const store = new RecordingStore();
      const { deliver, handlers } = await standard({ store });
      const payout = (reference: string) => ({
        transaction_reference: reference,
        result_code: 0,
        success: true,
        amount: 500,
      });

      await deliver(payout('9BD200000001eW'), { query: '?malipo_key=payout-9' });
      await deliver(payout('9BD200000002eW'), { query: '?malipo_key=payout-9' });

      expect(handlers.duplicates).toHaveLength(1);
      expect(store.calls).toContain(
        'complete payment.duplicate:payout-9:9BD200000001eW,9BD200000002eW',
      );
    });

    it('fails at boot with a store of the former interface (has/add)', async () => {
      const store = { has: () => false, add: () => undefined, recordReference: () => [] };
      await expect(
        boot([
          PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true, store } as never),
        ]),
      ).rejects.toThrow(/must implement claim\(key, leaseMs\), complete\(key\), release\(key\)$/);
    });

    it.each([0, -1, 1.5, Number.NaN])('fails at boot with leaseMs %s', async (leaseMs) => {
      await expect(
        boot([PaymentsWebhookModule.forRoot({ confirm: false, verify: () => true, leaseMs })]),
      ).rejects.toThrow(/leaseMs must be a positive integer/);
    });

    describe('closing on shutdown', () => {
      const quiet = { confirm: false, verify: () => true };

      it('closes a store the forRootAsync factory created', async () => {
        let store: RecordingStore | undefined;
        const { app } = await boot([
          PaymentsWebhookModule.forRootAsync({
            useFactory: () => ({ ...quiet, store: (store = new RecordingStore()) }),
          }),
        ]);

        await app.close();

        expect(store?.closed).toBe(1);
      });

      it('prefers onModuleDestroy to close', async () => {
        const store = Object.assign(new RecordingStore(), { destroyed: 0 });
        Object.assign(store, { onModuleDestroy: () => (store.destroyed += 1) });
        const { app } = await boot([
          PaymentsWebhookModule.forRootAsync({ useFactory: () => ({ ...quiet, store }) }),
        ]);

        await app.close();

        expect([store.destroyed, store.closed]).toEqual([1, 0]);
      });

      it('leaves a store given to forRoot open', async () => {
        const store = new RecordingStore();
        const { app } = await boot([PaymentsWebhookModule.forRoot({ ...quiet, store })]);

        await app.close();

        expect(store.closed).toBe(0);
      });

      it('leaves a provider of the app injected into the factory to Nest (closed once)', async () => {
        @Injectable()
        class AppStore extends RecordingStore {
          onModuleDestroy() {
            this.close();
          }
        }
        @Module({ providers: [AppStore], exports: [AppStore] })
        class StoreModule {}
        const { app } = await boot([
          PaymentsWebhookModule.forRootAsync({
            imports: [StoreModule],
            inject: [AppStore],
            useFactory: (store: AppStore) => ({ ...quiet, store }),
          }),
        ]);
        const store = app.get(AppStore, { strict: false });

        await app.close();

        expect(store.closed).toBe(1);
      });
    });
  });
});
