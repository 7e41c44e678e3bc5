import realFailure from '../../../libs/payments/spec-support/real-service/webhooks/kenya-failure.json';
import realSuccess from '../../../libs/payments/spec-support/real-service/webhooks/kenya-success.json';
import type { Transaction } from './ledger.service';
import { steady } from '../../../libs/payments/spec-support/steady';
import { WEBHOOK_WIRE_FIELDS } from '../../../libs/payments/src/webhooks/payment-webhook.wire';
import { goTimeString } from './webhook.dispatcher';
import { deadUrl, SandboxClient, setUpSandbox, startFastSandbox } from '../test/sandbox-test-kit';

/** The payload's keys, in order, as the real service's recorded success and failure send them. */
const SUCCESS_KEYS = Object.keys(realSuccess);
const FAILURE_KEYS = Object.keys(realFailure);

/** Every key of the payload carries the JSON type the library's table gives it. */
function expectWireTypes(body: Record<string, unknown>): void {
  for (const { key, type } of Object.values(WEBHOOK_WIRE_FIELDS)) {
    if (key in body) expect([key, typeof body[key]]).toEqual([key, type]);
  }
}
const GO_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})? \+0000 UTC$/;
const SANDBOX_USER_ID = '00000000-0000-4000-a000-000000000001';

describe('sandbox webhooks', () => {
  const env = setUpSandbox({}, { resetBeforeEach: false });

  /**
   * The transaction once `count` delivery attempts are recorded on it and no more come: an attempt
   * is recorded when its answer is read, which may be after the receiver saw it.
   */
  const withDeliveries = (reference: string, count: number): Promise<Transaction> =>
    steady(() => env.client.transaction(reference), `${count} recorded deliveries`, {
      done: (transaction) => transaction.webhookDeliveries.length >= count,
    });

  it('posts the real payload for a successful M-Pesa collection', async () => {
    const res = await env.client.send('collections.mpesa', { callback_url: env.receiver.url });
    const reference = res.json.transaction_reference;

    const [webhook] = await env.receiver.waitFor(reference);

    expect(webhook.path).toBe('/webhook');
    expect(webhook.contentType).toMatch(/^application\/json/);
    expect(Object.keys(webhook.body)).toEqual(SUCCESS_KEYS);
    expectWireTypes(webhook.body);
    expect(webhook.body).toEqual({
      transaction_reference: reference,
      result_code: 0,
      remarks: 'Successfully processes m-pesa transaction',
      third_party_trans_id: expect.stringMatching(/^U[A-Z0-9]{9}$/),
      amount: 1500,
      transaction_date: expect.stringMatching(GO_TIME),
      forward_url: env.receiver.url,
      order_id: '',
      user_id: SANDBOX_USER_ID,
      customer_name: '',
      success: true,
      web3_transaction_reference: '',
    });
    const transaction = await env.client.transaction(reference);
    expect(transaction).toMatchObject({
      status: 'success',
      resultCode: 0,
      thirdPartyTransId: webhook.body.third_party_trans_id,
    });
    expect(webhook.body.transaction_date).toBe(goTimeString(transaction.settledAt as string));
    expect((await withDeliveries(reference, 1)).webhookDeliveries).toEqual([
      { attempt: 1, at: expect.any(String), status: 200 },
    ]);
  });

  it('posts to the callback_url verbatim, and echoes it with its query in forward_url', async () => {
    const callback = `${env.receiver.url}?malipo_key=6c1d2d0e-6f0a-4b8e-9a57-3f1f2a9c0d11&x=1`;
    const res = await env.client.send('payouts.mpesa', { callback_url: callback });

    const [webhook] = await env.receiver.waitFor(res.json.correlator_id);

    expect(webhook.path).toBe('/webhook?malipo_key=6c1d2d0e-6f0a-4b8e-9a57-3f1f2a9c0d11&x=1');
    expect(webhook.body.forward_url).toBe(callback);
  });

  it('posts a pan-African payout success with the reference as third_party_trans_id', async () => {
    const res = await env.client.send('payouts.panAfrican', { callback_url: env.receiver.url });
    const reference = res.json.correlator_id;

    const [webhook] = await env.receiver.waitFor(reference);

    expect(webhook.body).toEqual({
      transaction_reference: reference,
      result_code: 0,
      remarks: 'complete',
      third_party_trans_id: reference,
      amount: 20000,
      transaction_date: expect.stringMatching(GO_TIME),
      forward_url: env.receiver.url,
      order_id: '',
      user_id: SANDBOX_USER_ID,
      customer_name: 'Ada Obi',
      success: true,
      web3_transaction_reference: '',
    });
  });

  it.each([
    [
      'an M-Pesa collection to a phone ending in 0000',
      'collections.mpesa',
      { phone_number: '0700000000' },
      1,
      'Transaction failed with message: [DS timeout user cannot be reached]',
      '',
    ],
    [
      'a merchant payout to a phone ending in 0000',
      'payouts.merchant',
      { phone_number: '+254712340000' },
      1,
      'Transaction failed with message: [DS timeout user cannot be reached]',
      '',
    ],
    [
      'an M-Pesa payout of 666',
      'payouts.mpesa',
      { amount: 666 },
      1,
      'Transaction failed with message: [Request Cancelled by user.]',
      '',
    ],
    [
      'a pan-African collection of 666',
      'collections.panAfrican',
      { amount: 666 },
      3000,
      'other: declined',
      'failed',
    ],
    [
      'a pan-African payout to a phone ending in 0000',
      'payouts.panAfrican',
      { phone_number: '+2348030000000' },
      3000,
      'other: account unreachable',
      'failed',
    ],
  ] as const)(
    'posts a failure for %s',
    async (_label, operation, overrides, resultCode, remarks, status) => {
      const res = await env.client.send(operation, {
        ...overrides,
        callback_url: env.receiver.url,
      });
      expect(res.status).toBe(200);
      const reference = res.json.transaction_reference ?? res.json.correlator_id;

      const [webhook] = await env.receiver.waitFor(reference);

      expect(Object.keys(webhook.body)).toEqual(FAILURE_KEYS);
      expectWireTypes(webhook.body);
      expect(webhook.body).toEqual({
        transaction_reference: reference,
        result_code: resultCode,
        remarks,
        transaction_date: expect.stringMatching(GO_TIME),
        forward_url: env.receiver.url,
        order_id: '',
        success: false,
        status,
      });
      expect(await env.client.transaction(reference)).toMatchObject({
        status: 'failed',
        resultCode,
        remarks,
        thirdPartyTransId: null,
      });
    },
  );

  it('carries the user_id of the account that made the request', async () => {
    const res = await env.client.send(
      'payouts.mpesa',
      { callback_url: env.receiver.url },
      { authorization: `Basic ${Buffer.from('beta:beta-secret').toString('base64')}` },
    );

    const [webhook] = await env.receiver.waitFor(res.json.correlator_id);

    expect(webhook.body.user_id).toBe('00000000-0000-4000-a000-000000000002');
  });

  it('re-delivers after a 500 the identical payload, and records every attempt', async () => {
    const res = await env.client.send('payouts.mpesa', {
      callback_url: env.receiver.scripted('flaky', 500),
    });
    const reference = res.json.correlator_id;

    const deliveries = await env.receiver.waitFor(reference, 2);

    expect(deliveries.map((d) => d.answered)).toEqual([500, 200]);
    // The same payload each time, so the receiver can de-duplicate.
    expect(deliveries[1].body).toEqual(deliveries[0].body);
    const transaction = await withDeliveries(reference, 2);
    expect(transaction.webhookDeliveries).toEqual([
      { attempt: 1, at: expect.any(String), status: 500 },
      { attempt: 2, at: expect.any(String), status: 200 },
    ]);
  });

  it('gives up after the configured re-deliveries', async () => {
    const res = await env.client.send('payouts.mpesa', {
      callback_url: env.receiver.scripted('down', 503, 503, 503, 503),
    });
    const reference = res.json.correlator_id;

    // One attempt plus one per entry of webhookRetryDelaysMs ([20, 40]), then nothing more.
    const transaction = await withDeliveries(reference, 3);
    const deliveries = await steady(() => env.receiver.for(reference), 'the deliveries', {
      done: (received) => received.length >= 3,
    });
    expect(deliveries).toHaveLength(3);
    expect(new Set(deliveries.map((d) => JSON.stringify(d.body))).size).toBe(1);
    expect(transaction.webhookDeliveries.map((d) => d.status)).toEqual([503, 503, 503]);
  });

  it('records network errors as delivery attempts and retries them', async () => {
    const res = await env.client.send('collections.mpesa', { callback_url: await deadUrl() });
    const reference = res.json.transaction_reference;

    const deliveries = (await withDeliveries(reference, 3)).webhookDeliveries;

    expect(deliveries.map((d) => d.attempt)).toEqual([1, 2, 3]);
    for (const delivery of deliveries) {
      expect(delivery.status).toBeUndefined();
      expect(delivery.error).toEqual(expect.any(String));
    }
  });

  it('sends no webhook for a transfer (it has no callback_url)', async () => {
    const before = env.receiver.received.length;
    const res = await env.client.send('transfers.send');
    // A payout made after it, with the same webhook delay: once its webhook came, and nothing
    // more for a while, a webhook of the transfer would have come too.
    const after = await env.client.send('payouts.mpesa', { callback_url: env.receiver.url });
    await env.receiver.waitFor(after.json.correlator_id);
    const received = await steady(() => env.receiver.received.length, 'the webhooks');

    expect(res.status).toBe(200);
    expect(received).toBe(before + 1);
  });

  it('waits webhookDelayMs before settling', async () => {
    const DELAY_MS = 1_500;
    const slow = await startFastSandbox({ webhookDelayMs: DELAY_MS });
    try {
      const slowClient = new SandboxClient(slow);
      const started = Date.now();
      const res = await slowClient.send('payouts.mpesa', { callback_url: env.receiver.url });
      const reference = res.json.correlator_id as string;
      const early = {
        webhooks: env.receiver.for(reference).length,
        transaction: await slowClient.transaction(reference),
      };
      // Looked at before the delay could have run out (it started after `started`): pending. On a
      // machine stalled for the whole delay this says nothing, so it is not checked then.
      if (Date.now() - started < DELAY_MS) {
        expect(early.webhooks).toBe(0);
        expect(early.transaction).toMatchObject({ status: 'pending' });
      }

      await env.receiver.waitFor(reference);
      // A lower bound: it holds however busy the machine.
      expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_MS - 10);
    } finally {
      await slow.close();
    }
  });
});

describe('goTimeString', () => {
  it.each([
    ['2026-02-09T10:37:50.286Z', '2026-02-09 10:37:50.286 +0000 UTC'],
    ['2026-02-09T10:37:50.280Z', '2026-02-09 10:37:50.28 +0000 UTC'],
    ['2026-02-09T10:37:50.000Z', '2026-02-09 10:37:50 +0000 UTC'],
  ])('prints %s as Go does: %s', (iso, go) => {
    expect(goTimeString(iso)).toBe(go);
  });
});
