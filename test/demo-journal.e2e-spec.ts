import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { PaymentsJournalEntry } from '@malipo/nestjs';
import type { RunningDemo } from '../apps/demo/src/demo';
import { startDemo } from '../apps/demo/src/demo';
import type { RunningSandbox } from '../apps/sandbox/src/sandbox';
import { startSandbox } from '../apps/sandbox/src/sandbox';
import { waitFor } from '../libs/payments/spec-support/wait-for';
import KENYA_FAILURE from '../libs/payments/spec-support/real-service/webhooks/kenya-failure.json';
import KENYA_SUCCESS from '../libs/payments/spec-support/real-service/webhooks/kenya-success.json';
import { DemoWithSandbox } from './support/demo-with-sandbox';
import { sandboxControl } from './support/sandbox-control';

/** An M-Pesa collection as the demo takes it: its defaults fill in username and callbackUrl. */
const COLLECTION = { amount: 1500, phoneNumber: '0712345678', narration: 'Order 42' };
const PAYOUT = { phoneNumber: '0712345678', narration: 'Refund 42' };

/** Where nobody listens: the sandbox's webhook for a call sent there never reaches the demo. */
const UNREACHABLE_CALLBACK_URL = 'http://127.0.0.1:9/webhooks/payments';

describe('demo: the payments journal (embedded sandbox, journal in memory)', () => {
  let world: DemoWithSandbox;

  beforeAll(async () => {
    world = await DemoWithSandbox.start();
  });
  beforeEach(() => world.control('reset', 'POST'));
  afterAll(() => world.close());

  const entryOf = async (idempotencyKey: string): Promise<PaymentsJournalEntry | undefined> =>
    (await world.journal()).entries.find((entry) => entry.idempotencyKey === idempotencyKey);

  it('shows a paid order settled by its webhook, with no phone number or narration', async () => {
    const { order } = await world.order('collections/mpesa', COLLECTION);
    expect((await world.settled(order.id)).status).toBe('SUCCESS');

    // The webhook settles the journal before the order handler runs: no wait needed here.
    const { status, entries } = await world.journal();
    expect(status).toBe(200);
    const entry = entries.find((listed) => listed.idempotencyKey === order.id);
    expect(entry).toMatchObject({
      operation: 'collections.mpesa',
      account: 'default',
      amount: COLLECTION.amount,
      currency: 'KES',
      state: 'succeeded',
      settledBy: 'webhook',
      settledStatus: 'success',
      reference: order.transactionReference,
      calls: [expect.objectContaining({ outcome: 'accepted' })],
    });
    const shown = JSON.stringify(entries);
    expect(shown).not.toContain(COLLECTION.phoneNumber);
    expect(shown).not.toContain('254712345678');
    expect(shown).not.toContain(COLLECTION.narration);
  });

  it('holds a payout whose answer was lost as in doubt, until its webhook settles it', async () => {
    await world.control('faults', 'POST', { count: 1, status: 502, afterExecute: true });

    const answer = await fetch(`${world.demo.url}/orders/payouts/mpesa`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...PAYOUT, amount: 2000 }),
    });
    const problem = (await answer.json()) as { idempotencyKey: string; mayHaveExecuted: boolean };
    expect(answer.status).toBe(502);
    expect(problem.mayHaveExecuted).toBe(true);

    // The demo answers once the send's end is journaled; the webhook may already have settled it.
    expect(await entryOf(problem.idempotencyKey)).toMatchObject({
      operation: 'payouts.mpesa',
      amount: 2000,
      calls: [
        expect.objectContaining({
          outcome: 'in_doubt',
          mayHaveExecuted: true,
          code: 'SERVICE_ERROR',
          httpStatus: 502,
        }),
      ],
    });
    const settled = await waitFor(
      async () => {
        const entry = await entryOf(problem.idempotencyKey);
        return entry?.state === 'succeeded' ? entry : undefined;
      },
      'the journal entry to settle',
      20_000,
    );
    const [executed] = await world.transactions();
    expect(settled).toMatchObject({ settledBy: 'webhook', reference: executed.reference });
    expect((await world.journal('/in-doubt')).entries).not.toContainEqual(
      expect.objectContaining({ idempotencyKey: problem.idempotencyKey }),
    );
  });

  it("refuses a forged webhook handing one lost payout another's genuine outcome of the same amount", async () => {
    /** A payout of 3000 KES to `phoneNumber`, executed, its answer lost, its webhook astray. */
    const lostPayout = async (phoneNumber: string) => {
      await world.control('faults', 'POST', { count: 1, status: 502, afterExecute: true });
      const answer = await fetch(`${world.demo.url}/orders/payouts/mpesa`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          phoneNumber,
          narration: 'Salary',
          amount: 3000,
          callbackUrl: UNREACHABLE_CALLBACK_URL,
        }),
      });
      expect(answer.status).toBe(502);
      return ((await answer.json()) as { idempotencyKey: string }).idempotencyKey;
    };
    const amina = await lostPayout('0712333333');
    // Ends in 0000: the sandbox fails it.
    const felix = await lostPayout('0712340000');
    const executed = await waitFor(
      async () => {
        const ledger = await world.transactions();
        const of = (key: string) => ledger.find((t) => t.idempotencyKey === key);
        const [hers, his] = [of(amina), of(felix)];
        return hers?.status === 'success' && his?.status === 'failed' ? { hers, his } : undefined;
      },
      'the sandbox to settle both payouts',
      20_000,
    );
    /** The service's own delivery of `reference`, in the real Kenyan shape, under `key`. */
    const deliver = (key: string, reference: string, succeeded: boolean) =>
      fetch(`${world.demo.url}/webhooks/payments?malipo_key=${key}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...(succeeded ? KENYA_SUCCESS : KENYA_FAILURE),
          transaction_reference: reference,
          amount: 3000,
        }),
      });

    // Felix's genuine failure under Amina's key (it travels in her callback URL): not her payee.
    expect((await deliver(amina, executed.his.reference, false)).status).toBe(409);
    expect(await entryOf(amina)).toMatchObject({ state: 'in_doubt' });
    // Each genuine delivery settles its own payout.
    expect((await deliver(amina, executed.hers.reference, true)).status).toBe(200);
    expect((await deliver(felix, executed.his.reference, false)).status).toBe(200);
    expect(await entryOf(amina)).toMatchObject({
      state: 'succeeded',
      reference: executed.hers.reference,
    });
    expect(await entryOf(felix)).toMatchObject({
      state: 'failed',
      reference: executed.his.reference,
    });
  });

  it('reconciles by status look-up a call whose webhook never came, and answers a summary', async () => {
    const since = new Date();
    const { order } = await world.order('collections/mpesa', {
      ...COLLECTION,
      callbackUrl: UNREACHABLE_CALLBACK_URL,
    });
    expect(await entryOf(order.id)).toMatchObject({ state: 'accepted' });
    await waitFor(
      async () =>
        (await world.transactions()).some(
          (t) => t.reference === order.transactionReference && t.status === 'success',
        ) || undefined,
      'the sandbox to settle the collection',
      20_000,
    );

    const { status, summary } = await world.reconcile(since);

    expect(status).toBe(200);
    expect(summary).toEqual({
      checked: 1,
      changed: 1,
      lookupFailures: 0,
      totals: { succeeded: { KES: { count: 1, amount: COLLECTION.amount } } },
      byOperation: {
        'collections.mpesa': { succeeded: { KES: { count: 1, amount: COLLECTION.amount } } },
      },
      inDoubt: [],
    });
    expect(await entryOf(order.id)).toMatchObject({
      state: 'succeeded',
      settledBy: 'status',
      reference: order.transactionReference,
    });
    // The order itself waits for a webhook: the journal is the library's record, not the shop's.
    expect((await world.getOrder(order.id)).status).toBe('PENDING');
  });

  it('lists entries by state, and refuses a state that does not exist', async () => {
    const { order } = await world.order('collections/mpesa', COLLECTION);
    await world.settled(order.id);

    const succeeded = await world.journal('?state=succeeded');
    expect(succeeded.entries.map((entry) => entry.idempotencyKey)).toContain(order.id);
    expect(succeeded.entries.every((entry) => entry.state === 'succeeded')).toBe(true);
    expect((await world.journal('?state=paid')).status).toBe(400);
    expect((await world.journal('?since=yesterday')).status).toBe(400);
    // ISO 8601 to the validation pipe, no date to the reconciler: still the caller's mistake.
    expect((await world.journal('?since=2026-W05')).status).toBe(400);
  });
});

/**
 * A Redis that accepts connections and never answers (a frozen server): every command of the
 * demo's clients fails at their command timeout. Its sockets close when the clients end them.
 */
async function frozenRedis(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('end', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('demo: the payments journal on a Redis that does not answer', () => {
  let redis: Awaited<ReturnType<typeof frozenRedis>>;
  let sandbox: RunningSandbox;
  let demo: RunningDemo;

  beforeAll(async () => {
    redis = await frozenRedis();
    sandbox = await startSandbox({ port: 0, logger: false });
    demo = await startDemo({
      port: 0,
      logger: false,
      environment: {
        PAYMENTS_API_USERNAME: sandbox.credentials.apiUsername,
        PAYMENTS_API_PASSWORD: sandbox.credentials.apiPassword,
        PAYMENTS_BASE_URL: sandbox.url,
        PAYMENTS_DEFAULT_USERNAME: 'demo-shop',
        REDIS_URL: redis.url,
      },
    });
  });
  afterAll(async () => {
    await demo?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('sends no payment it cannot journal (503, not executed), and says the journal is down', async () => {
    const answer = await fetch(`${demo.url}/orders/payouts/mpesa`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...PAYOUT, amount: 500 }),
    });

    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({
      code: 'JOURNAL_UNAVAILABLE',
      mayHaveExecuted: false,
    });
    expect(await sandboxControl(sandbox)<unknown[]>('transactions')).toEqual([]);
    expect((await fetch(`${demo.url}/journal`)).status).toBe(503);
    expect((await fetch(`${demo.url}/journal/reconcile`, { method: 'POST' })).status).toBe(503);
  });
});
