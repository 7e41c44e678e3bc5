import type { WebhookDelivery } from './ledger.service';
import {
  deadUrl,
  SandboxClient,
  setUpSandbox,
  sleep,
  startFastSandbox,
  wireBody,
} from '../test/sandbox-test-kit';

const PAYLOAD_KEYS = [
  'amount',
  'channel',
  'currency',
  'event',
  'message',
  'occurred_at',
  'status',
  'success',
  'transaction_reference',
];

describe('sandbox webhooks', () => {
  const env = setUpSandbox({}, { resetBeforeEach: false });

  it('posts payment.completed for a successful collection, with exactly the contract keys', async () => {
    const res = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: env.receiver.url }),
    );
    const reference = res.json.transaction_reference;

    const [webhook] = await env.receiver.waitFor(reference);

    expect(webhook.path).toBe('/webhook');
    expect(webhook.contentType).toMatch(/^application\/json/);
    expect(Object.keys(webhook.body).sort()).toEqual(PAYLOAD_KEYS);
    expect(webhook.body).toEqual({
      transaction_reference: reference,
      status: 'SUCCESS',
      success: true,
      amount: 1500,
      currency: 'KES',
      message: 'Payment completed',
      channel: 'MOBILE_MONEY_KE',
      event: 'payment.completed',
      occurred_at: expect.any(String),
    });
    expect(new Date(webhook.body.occurred_at).toISOString()).toBe(webhook.body.occurred_at);
    const transaction = await env.client.transaction(reference);
    expect(transaction).toMatchObject({ status: 'SUCCESS', settledAt: webhook.body.occurred_at });
    expect(transaction.webhookDeliveries).toEqual([
      { attempt: 1, at: expect.any(String), status: 200 },
    ]);
  });

  it('posts payout.completed for a successful payout, with its channel and currency', async () => {
    const res = await env.client.post(
      '/api/v2/payments',
      wireBody('payouts.panAfrican', { callback_url: env.receiver.url }),
    );

    const [webhook] = await env.receiver.waitFor(res.json.transaction_reference);

    expect(webhook.body).toMatchObject({
      status: 'SUCCESS',
      success: true,
      event: 'payout.completed',
      amount: 20000,
      currency: 'NGN',
      channel: 'BANK',
      message: 'Payout completed',
    });
  });

  it.each([
    [
      'a collection to a phone ending in 0000',
      '/api/v2/payments',
      wireBody('collections.mpesa', { phone_number: '+254700000000' }),
      'payment.failed',
      'Customer unreachable',
    ],
    [
      'a payout to a phone ending in 0000',
      '/api/v3/withdrawal',
      wireBody('payouts.merchant', { phone_number: '+254712340000' }),
      'payout.failed',
      'Recipient unreachable',
    ],
    [
      'a collection of 666',
      '/api/v3/payments',
      wireBody('collections.panAfrican', { amount: 666 }),
      'payment.failed',
      'Declined',
    ],
    [
      'a payout of 666',
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', { amount: 666 }),
      'payout.failed',
      'Declined',
    ],
  ])('posts FAILED for %s', async (_label, path, body, event, message) => {
    const res = await env.client.post(path, { ...body, callback_url: env.receiver.url });
    expect(res.status).toBe(200);

    const [webhook] = await env.receiver.waitFor(res.json.transaction_reference);

    expect(Object.keys(webhook.body).sort()).toEqual(PAYLOAD_KEYS);
    expect(webhook.body).toMatchObject({ status: 'FAILED', success: false, event, message });
    expect(await env.client.transaction(res.json.transaction_reference)).toMatchObject({
      status: 'FAILED',
      message,
    });
  });

  it('re-delivers after a 500 and records every attempt', async () => {
    const res = await env.client.post(
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', { callback_url: env.receiver.scripted('flaky', 500) }),
    );
    const reference = res.json.transaction_reference;

    const deliveries = await env.receiver.waitFor(reference, 2);

    expect(deliveries.map((d) => d.answered)).toEqual([500, 200]);
    // The same payload each time, so the receiver can de-duplicate.
    expect(deliveries[1].body).toEqual(deliveries[0].body);
    const transaction = await env.client.transaction(reference);
    expect(transaction.webhookDeliveries).toEqual([
      { attempt: 1, at: expect.any(String), status: 500 },
      { attempt: 2, at: expect.any(String), status: 200 },
    ]);
  });

  it('gives up after the configured re-deliveries', async () => {
    const res = await env.client.post(
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', {
        callback_url: env.receiver.scripted('down', 503, 503, 503, 503),
      }),
    );
    const reference = res.json.transaction_reference;

    await env.receiver.waitFor(reference, 3);
    await sleep(150);

    // One attempt plus one per entry of webhookRetryDelaysMs ([20, 40]).
    expect(env.receiver.for(reference)).toHaveLength(3);
    const transaction = await env.client.transaction(reference);
    expect(transaction.webhookDeliveries.map((d) => d.status)).toEqual([503, 503, 503]);
  });

  it('records network errors as delivery attempts and retries them', async () => {
    const res = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: await deadUrl() }),
    );
    const reference = res.json.transaction_reference;

    let deliveries: WebhookDelivery[] = [];
    const deadline = Date.now() + 3000;
    while (deliveries.length < 3 && Date.now() < deadline) {
      await sleep(20);
      deliveries = (await env.client.transaction(reference)).webhookDeliveries;
    }

    expect(deliveries.map((d) => d.attempt)).toEqual([1, 2, 3]);
    for (const delivery of deliveries) {
      expect(delivery.status).toBeUndefined();
      expect(delivery.error).toEqual(expect.any(String));
    }
  });

  it('waits webhookDelayMs before settling', async () => {
    const slow = await startFastSandbox({ webhookDelayMs: 400 });
    try {
      const slowClient = new SandboxClient(slow);
      const res = await slowClient.post(
        '/api/v2/withdrawal',
        wireBody('payouts.mpesa', { callback_url: env.receiver.url }),
      );
      await sleep(100);
      expect(env.receiver.for(res.json.transaction_reference)).toEqual([]);
      expect(await slowClient.transaction(res.json.transaction_reference)).toMatchObject({
        status: 'QUEUED',
      });

      await env.receiver.waitFor(res.json.transaction_reference);
    } finally {
      await slow.close();
    }
  });
});
