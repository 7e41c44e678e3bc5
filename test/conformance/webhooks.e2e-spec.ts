/**
 * Conformance of the webhook route with the real service's callbacks: each recorded example
 * (libs/payments/spec-support/real-service/webhooks/, mirrored from the public SDK repository) is posted to
 * `PaymentsWebhookModule` as recorded, confirmed against a loopback status look-up that answers
 * consistently, and dispatched with the right kind and outcome.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PaymentsModule } from '@malipo/nestjs';
import {
  OnPaymentEvent,
  PaymentsWebhookModule,
  type PaymentWebhookEvent,
} from '@malipo/nestjs/webhooks';
import { fixture, fixtureText } from './conformance-kit';

/** Each example with the kind and outcome it must be dispatched as. */
const EXAMPLES = [
  ['kenya-success', 'collection', true],
  ['kenya-failure', 'collection', false],
  ['pan-african-success', 'payout', true],
  ['pan-african-failure', 'collection', false],
] as const;

@Injectable()
class RecordingHandlers {
  readonly named: PaymentWebhookEvent[] = [];
  readonly all: PaymentWebhookEvent[] = [];

  @OnPaymentEvent('collection.succeeded', 'collection.failed', 'payout.succeeded', 'payout.failed')
  onOutcome(event: PaymentWebhookEvent) {
    this.named.push(event);
  }

  @OnPaymentEvent()
  onAny(event: PaymentWebhookEvent) {
    this.all.push(event);
  }
}

/**
 * The status look-up (`GET /api/v1/status/{reference}`): the recorded status example, made to
 * agree with the example webhook of that reference (same code, outcome and amount).
 */
async function startStatusServer(): Promise<{ server: Server; url: string }> {
  const webhooks = EXAMPLES.map(([name]) => fixture(`webhooks/${name}.json`));
  const server = createServer((req, res) => {
    const reference = decodeURIComponent(
      /^\/api\/v1\/status\/(.+)$/.exec(req.url ?? '')?.[1] ?? '',
    );
    const webhook = webhooks.find((body) => body.transaction_reference === reference);
    if (req.method !== 'GET' || !webhook) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"status":404,"success":false,"message":"not found"}');
      return;
    }
    const record = fixture<{ transaction_details: Record<string, unknown> } & object>(
      'transactions/status-response.json',
    );
    const answer = {
      ...record,
      code: reference,
      amount: typeof webhook.amount === 'number' ? webhook.amount : 10,
      transaction_details: {
        ...record.transaction_details,
        status: webhook.success === true ? 'success' : 'failed',
      },
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('conformance: webhooks of the real service', () => {
  let status: { server: Server; url: string };
  let app: INestApplication;
  let handlers: RecordingHandlers;
  let webhookUrl: string;

  beforeAll(async () => {
    status = await startStatusServer();
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiUsername: 'u',
          apiPassword: 'p',
          baseUrl: status.url,
          maxRetries: 0,
        }),
        PaymentsWebhookModule.forRoot({ path: 'webhooks/payments' }),
      ],
      providers: [RecordingHandlers],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    webhookUrl = `${await app.getUrl()}/webhooks/payments`;
    handlers = app.get(RecordingHandlers);
  });
  afterAll(async () => {
    await app.close();
    status.server.closeAllConnections();
    await new Promise((resolve) => status.server.close(resolve));
  });

  it.each(EXAMPLES)(
    '%s is confirmed and dispatched as a %s, succeeded %s',
    async (name, kind, succeeded) => {
      const text = fixtureText(`webhooks/${name}.json`);
      const body = JSON.parse(text) as Record<string, unknown>;

      // Posted byte for byte as recorded.
      const response = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      });

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, duplicate: false, handled: 2 });
      const event = handlers.named.find(
        (e) => e.transactionReference === body.transaction_reference,
      );
      expect(event).toMatchObject({
        kind,
        succeeded,
        name: `${kind}.${succeeded ? 'succeeded' : 'failed'}`,
        resultCode: body.result_code,
        remarks: body.remarks,
        transactionDate: body.transaction_date,
        forwardUrl: body.forward_url,
        success: body.success,
        confirmation: { code: body.transaction_reference },
      });
      expect(event?._raw).toEqual(body);
      expect(handlers.all).toContain(event);
    },
  );
});
