import type { Transaction } from './ledger.service';
import { steady } from '../../../libs/payments/spec-support/steady';
import {
  SandboxClient,
  setUpSandbox,
  startFastSandbox,
  waitUntil,
  WebhookReceiver,
  wireBody,
} from '../test/sandbox-test-kit';

/** The webhook delay: how long a transaction stays pending before it settles by itself. */
const DELAY_MS = 1_000;

/**
 * Runs `check`, on state read before it is called, only if that state was surely read before
 * any settlement: less than DELAY_MS after `started`, taken before the request (the settlement is
 * scheduled after it). On a machine stalled that long the state may be settled already, and says
 * nothing; on any other it is checked.
 */
function ifBeforeSettlement(started: number, check: () => void): void {
  if (Date.now() - started < DELAY_MS) check();
  else
    console.log('read after the webhook delay (a busy machine): the pending state is not checked');
}

describe('sandbox ledger and wallets', () => {
  // Long enough to look at a transaction before it settles (reads after it are not checked).
  const env = setUpSandbox({
    initialBalances: { local: 10_000, USD: 200 },
    webhookDelayMs: DELAY_MS,
  });

  const mpesaPayout = (overrides: Record<string, unknown> = {}) =>
    env.client.post(
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', { callback_url: env.receiver.url, ...overrides }),
    );
  const usdPayout = (overrides: Record<string, unknown> = {}) =>
    env.client.post(
      '/api/v2/payments',
      wireBody('payouts.panAfrican', { callback_url: env.receiver.url, ...overrides }),
    );
  const refOf = (res: { json: { transaction_reference?: string; correlator_id?: string } }) =>
    (res.json.transaction_reference ?? res.json.correlator_id) as string;
  const settled = async (reference: string) => {
    await env.receiver.waitFor(reference);
    return env.client.transaction(reference);
  };

  it('starts with the initial balances and the fixed USD rate', async () => {
    expect(await env.client.wallets()).toEqual({ local: 10_000, USD: 200, usdRate: 130 });
  });

  it('debits a local-wallet payout by its amount when accepted', async () => {
    const started = Date.now();
    const res = await mpesaPayout({ amount: 1000 });

    expect(await env.client.wallets()).toMatchObject({ local: 9000, USD: 200 });
    const early = await env.client.transaction(refOf(res));
    expect(early).toMatchObject({
      operation: 'payouts.mpesa',
      kind: 'payout',
      type: 'withdrawal',
      account: 'sandbox',
      amount: 1000,
      currency: 'KES',
      walletType: 'local',
      debited: 1000,
    });
    ifBeforeSettlement(started, () =>
      expect(early).toMatchObject({ status: 'pending', settledAt: null, webhookDeliveries: [] }),
    );

    const transaction = await settled(refOf(res));
    expect(transaction).toMatchObject({ status: 'success', settledAt: expect.any(String) });
    expect(await env.client.wallets()).toMatchObject({ local: 9000 });
  });

  it('debits a USD-wallet payout by amount / usdRate, rounded to cents', async () => {
    // The fixture: 20000 from the USD wallet, 20000 / 130 = 153.846...
    const res = await usdPayout();

    expect(res.status).toBe(200);
    expect(await env.client.wallets()).toEqual({ local: 10_000, USD: 46.15, usdRate: 130 });
    expect(await env.client.transaction(refOf(res))).toMatchObject({
      walletType: 'USD',
      amount: 20000,
      debited: 153.85,
    });
  });

  it('refuses a payout larger than the wallet with 402 and records nothing', async () => {
    await usdPayout();
    const before = await env.client.transactions();

    const usd = await usdPayout();
    const local = await mpesaPayout({ amount: 10_001 });

    for (const res of [usd, local]) {
      expect(res.status).toBe(402);
      expect(res.json).toEqual({
        status: 402,
        success: false,
        message: expect.stringContaining('Insufficient funds'),
      });
    }
    expect(await env.client.transactions()).toEqual(before);
    expect(await env.client.wallets()).toMatchObject({ local: 10_000, USD: 46.15 });
  });

  it('refunds a payout that ends failed', async () => {
    const started = Date.now();
    const res = await mpesaPayout({ amount: 500, phone_number: '0712340000' });
    const debited = await env.client.wallets();
    ifBeforeSettlement(started, () => expect(debited).toMatchObject({ local: 9500 }));

    const transaction = await settled(refOf(res));

    expect(transaction).toMatchObject({
      status: 'failed',
      resultCode: 1,
      remarks: 'Transaction failed with message: [DS timeout user cannot be reached]',
    });
    expect(await env.client.wallets()).toMatchObject({ local: 10_000 });
  });

  it('refunds a failed USD payout to the USD wallet', async () => {
    const started = Date.now();
    const res = await usdPayout({ amount: 666 });
    const debited = await env.client.wallets();
    ifBeforeSettlement(started, () => expect(debited).toMatchObject({ USD: 194.88 }));

    await settled(refOf(res));

    expect(await env.client.wallets()).toMatchObject({ local: 10_000, USD: 200 });
  });

  it('credits the local wallet when a collection succeeds, not when it fails', async () => {
    const started = Date.now();
    const ok = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { amount: 1500, callback_url: env.receiver.url }),
    );
    const failed = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { amount: 666, callback_url: env.receiver.url }),
    );
    const before = await env.client.wallets();
    ifBeforeSettlement(started, () => expect(before).toMatchObject({ local: 10_000 }));

    expect(await settled(refOf(ok))).toMatchObject({ status: 'success' });
    expect(await settled(refOf(failed))).toMatchObject({ status: 'failed' });
    expect(await env.client.wallets()).toMatchObject({ local: 11_500 });
  });

  it('lists transactions oldest first, with the documented fields', async () => {
    const started = Date.now();
    const first = await mpesaPayout();
    const second = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: env.receiver.url }),
      { idempotencyKey: 'key-2' },
    );

    const list = await env.client.transactions();

    expect(list.map((t) => t.reference)).toEqual([refOf(first), refOf(second)]);
    expect(list[1]).toEqual(
      expect.objectContaining({
        reference: refOf(second),
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        operation: 'collections.mpesa',
        kind: 'collection',
        type: 'receipt',
        region: 'kenya',
        account: 'sandbox',
        channel: 'mobile',
        phoneNumber: '0712345678',
        customerName: '',
        narration: 'Order 42',
        settlement: 'automatic',
        amount: 1500,
        currency: 'KES',
        callbackUrl: env.receiver.url,
        idempotencyKey: 'key-2',
        createdAt: expect.any(String),
      }),
    );
    expect(list[1]).not.toHaveProperty('debited');
    ifBeforeSettlement(started, () =>
      expect(list[1]).toMatchObject({
        status: 'pending',
        resultCode: null,
        remarks: null,
        thirdPartyTransId: null,
        settledAt: null,
        webhookDeliveries: [],
      }),
    );
  });

  it('answers an unknown transaction with 404', async () => {
    const res = await env.client.get('/__sandbox/transactions/9BD000000000eR');

    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      status: 404,
      success: false,
      message: 'No transaction with reference 9BD000000000eR',
    });
  });

  it('resets ledger, request log, faults, idempotency cache and balances', async () => {
    await mpesaPayout({ amount: 2000 });
    await env.client.control('POST', '/__sandbox/faults', { status: 500, count: 5 });
    const keyed = () =>
      env.client.post(
        '/api/v2/withdrawal',
        wireBody('payouts.mpesa', { callback_url: env.receiver.url }),
        {
          idempotencyKey: 'reset-key',
        },
      );
    await keyed();

    const res = await env.client.control('POST', '/__sandbox/reset');

    expect(res.status).toBe(200);
    expect(await env.client.transactions()).toEqual([]);
    expect(await env.client.requests()).toEqual([]);
    expect(await env.client.wallets()).toEqual({ local: 10_000, USD: 200, usdRate: 130 });
    expect((await env.client.accounts()).map((a) => [a.local, a.USD])).toEqual([
      [10_000, 200],
      [10_000, 200],
    ]);
    expect((await env.client.get('/__sandbox/faults')).json).toEqual({ queued: [], random: null });
    // Faults gone and the key forgotten: the same request now executes anew.
    const again = await keyed();
    expect(again.status).toBe(200);
    expect(await env.client.transactions()).toHaveLength(1);
  });
});

describe('sandbox reset with webhooks pending', () => {
  it('cancels the pending settlements and their webhooks', async () => {
    const receiver = await WebhookReceiver.start();
    const sandbox = await startFastSandbox({ webhookDelayMs: DELAY_MS });
    try {
      const client = new SandboxClient(sandbox);
      const started = Date.now();
      const res = await client.post(
        '/api/v2/withdrawal',
        wireBody('payouts.mpesa', { callback_url: receiver.url }),
      );
      const answeredAt = Date.now();
      expect(res.status).toBe(200);

      await client.reset();
      // The reset came before the settlement was due (it was scheduled after `started`): on a
      // machine stalled longer, the webhook may have gone already, which says nothing.
      const resetInTime = Date.now() - started < DELAY_MS;
      // Past the time the settlement was due (scheduled before `answeredAt`), plus a margin: a
      // lower bound, then nothing more for a while.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, answeredAt + DELAY_MS + 250 - Date.now())),
      );
      const received = await steady(() => receiver.received.length, 'the webhooks');

      if (resetInTime) expect(received).toBe(0);
      else console.log('reset after the webhook delay (a busy machine): not checked');
      expect(await client.transactions()).toEqual([]);
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });

  it('stops re-deliveries that were waiting when reset', async () => {
    const receiver = await WebhookReceiver.start();
    const sandbox = await startFastSandbox({ webhookRetryDelaysMs: [DELAY_MS, DELAY_MS] });
    try {
      const client = new SandboxClient(sandbox);
      const started = Date.now();
      const res = await client.post(
        '/api/v2/withdrawal',
        wireBody('payouts.mpesa', { callback_url: receiver.scripted('down', 500, 500, 500) }),
      );
      const reference = res.json.correlator_id as string;
      await waitUntil(() => receiver.for(reference).length === 1);
      // The re-delivery is scheduled when the 500 is recorded: from then on it is waiting.
      await steady(() => client.transaction(reference), 'the first attempt to be recorded', {
        done: (transaction: Transaction) => transaction.webhookDeliveries.length === 1,
        reads: 1,
      });
      const recordedAt = Date.now();

      await client.reset();
      // The reset came before the re-delivery was due (scheduled after `started`): on a machine
      // stalled longer, it may have gone already, which says nothing.
      const resetInTime = Date.now() - started < DELAY_MS;
      // Past the time it was due (scheduled before `recordedAt`), plus a margin: a lower bound,
      // then nothing more for a while.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, recordedAt + DELAY_MS + 250 - Date.now())),
      );
      const deliveries = await steady(() => receiver.for(reference).length, 'the deliveries');

      if (resetInTime) expect(deliveries).toBe(1);
      else console.log('reset after the re-delivery delay (a busy machine): not checked');
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });
});
