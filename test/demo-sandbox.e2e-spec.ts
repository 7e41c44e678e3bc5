import { OPERATION_CASES } from '../libs/payments/spec-support/operation-cases';
import type { SandboxTransaction } from './support/demo-with-sandbox';
import { DemoWithSandbox } from './support/demo-with-sandbox';
import { waitFor } from '../libs/payments/spec-support/wait-for';

/** The fixture requests without username and callbackUrl: the demo's defaults fill them in. */
function orderBody(index: number, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { ...OPERATION_CASES[index].request, ...patch };
  delete body.username;
  delete body.callbackUrl;
  return body;
}

const ROUTES = [
  ['collections.mpesa', 'collections/mpesa', 0, 'collection.succeeded'],
  ['collections.panAfrican', 'collections/pan-african', 2, 'collection.succeeded'],
  ['payouts.mpesa', 'payouts/mpesa', 3, 'payout.succeeded'],
  ['payouts.panAfrican', 'payouts/pan-african', 4, 'payout.succeeded'],
  ['payouts.merchant', 'payouts/merchant', 5, 'payout.succeeded'],
] as const;

describe('demo + sandbox end to end', () => {
  let world: DemoWithSandbox;

  beforeAll(async () => {
    world = await DemoWithSandbox.start();
  });
  beforeEach(() => world.control('reset', 'POST'));
  afterAll(() => world.close());

  const payoutAttempts = async (): Promise<unknown[]> =>
    (await world.control<{ method: string }[]>('requests')).filter((r) => r.method === 'POST');
  const ledgerEntry = async (reference: string): Promise<SandboxTransaction[]> =>
    (await world.transactions()).filter((t) => t.reference === reference);

  describe.each(ROUTES)('%s', (operation, path, index, completedEvent) => {
    it('initiates through the library and settles SUCCESS by webhook', async () => {
      const { status, order } = await world.order(path, orderBody(index));

      expect(status).toBe(201);
      expect(order.status).toBe(operation.startsWith('payouts') ? 'QUEUED' : 'PENDING');
      const settled = await world.settled(order.id);

      expect(settled.status).toBe('SUCCESS');
      expect(settled.events).toEqual([
        expect.objectContaining({ event: completedEvent, status: 'SUCCESS' }),
      ]);
      const entries = await ledgerEntry(order.transactionReference!);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ operation, status: 'success', idempotencyKey: order.id });
    });
  });

  it('settles FAILED for the magic phone number of a collection', async () => {
    const { order } = await world.order(
      'collections/mpesa',
      orderBody(0, { phoneNumber: '0712340000' }),
    );
    const settled = await world.settled(order.id);

    expect(settled.status).toBe('FAILED');
    expect(settled.events[0]).toMatchObject({ event: 'collection.failed' });
  });

  it('settles FAILED for the declined amount of a payout, and refunds the wallet', async () => {
    const before = await world.wallets();
    const { order } = await world.order('payouts/mpesa', orderBody(3, { amount: 666 }));
    const settled = await world.settled(order.id);

    expect(settled.status).toBe('FAILED');
    expect(settled.events[0]).toMatchObject({ event: 'payout.failed' });
    expect(await world.wallets()).toMatchObject({ local: before.local });
  });

  it('debits the wallet of a successful payout', async () => {
    const before = await world.wallets();
    const { order } = await world.order('payouts/mpesa', orderBody(3, { amount: 1000 }));
    await world.settled(order.id);

    expect((await world.wallets()).local).toBe(before.local - 1000);
  });

  describe('card checkout', () => {
    it.each([
      ['pay', 'SUCCESS', 'collection.succeeded'],
      ['decline', 'FAILED', 'collection.failed'],
    ])('completes by POSTing the hosted page form (%s)', async (action, status, event) => {
      const { order } = await world.order('collections/card', orderBody(1));
      expect(order.status).toBe('PENDING');
      expect(order.checkoutUrl).toMatch(new RegExp(`^${world.sandbox.url}/checkout/`));

      const page = await (await fetch(order.checkoutUrl!)).text();
      const formAction = new RegExp(
        `<form[^>]*method="post"[^>]*action="([^"]*/${action})"`,
        'i',
      ).exec(page)?.[1];
      expect(formAction).toBeDefined();
      const submitted = await fetch(new URL(formAction!, order.checkoutUrl), {
        method: 'POST',
        redirect: 'manual',
      });
      expect(submitted.status).toBeLessThan(400);

      const settled = await world.settled(order.id);
      expect(settled.status).toBe(status);
      expect(settled.events[0]).toMatchObject({ event });
    });
  });

  describe('retries healed by fault injection', () => {
    it('retries 503s of a collection with one idempotency key and executes once', async () => {
      await world.control('faults', 'POST', { count: 2, status: 503 });

      const { status, order } = await world.order('collections/mpesa', orderBody(0));

      expect(status).toBe(201);
      // POSTs only: a late webhook of the previous test may still be confirmed (a GET) by the demo.
      const requests = (
        await world.control<{ method: string; idempotencyKey: string; fault?: string }[]>(
          'requests',
        )
      ).filter((r) => r.method === 'POST');
      expect(requests).toHaveLength(3);
      expect(new Set(requests.map((r) => r.idempotencyKey))).toEqual(new Set([order.id]));
      expect(await ledgerEntry(order.transactionReference!)).toHaveLength(1);
      expect(await world.transactions()).toHaveLength(1);
    });

    it('does not retry an ambiguous payout, and settles it by its webhook when it executed', async () => {
      // The demo sends payouts with retryAmbiguous: false.
      await world.control('faults', 'POST', { count: 1, status: 502, afterExecute: true });
      const before = await world.wallets();

      const answer = await fetch(`${world.demo.url}/orders/payouts/mpesa`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(orderBody(3, { amount: 2000 })),
      });
      const problem = (await answer.json()) as { mayHaveExecuted: boolean; idempotencyKey: string };

      expect(answer.status).toBe(502);
      expect(problem).toMatchObject({ mayHaveExecuted: true, code: 'SERVICE_ERROR' });
      // POSTs only: a late webhook of the previous test may still be confirmed (a GET) by the demo.
      expect(await payoutAttempts()).toHaveLength(1);
      // The webhook carries the call's key as malipo_key: the order settles although the answer was lost.
      const settled = await world.settled(problem.idempotencyKey);
      expect(settled).toMatchObject({
        status: 'SUCCESS',
        transactionReference: expect.any(String),
      });
      expect(await world.transactions()).toHaveLength(1);
      expect((await world.wallets()).local).toBe(before.local - 2000);
    });

    it('does not retry a payout answered 503, which is ambiguous', async () => {
      await world.control('faults', 'POST', { count: 1, status: 503 });

      const answer = await fetch(`${world.demo.url}/orders/payouts/mpesa`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(orderBody(3)),
      });

      // A 503 answer is ambiguous (a proxy may answer it after the service executed): not retried.
      expect(answer.status).toBe(502);
      // POSTs only: a late webhook of the previous test may still be confirmed (a GET) by the demo.
      expect(await payoutAttempts()).toHaveLength(1);
      expect(await world.transactions()).toHaveLength(0);
    });

    it('heals a reset connection', async () => {
      await world.control('faults', 'POST', { count: 1, reset: true });

      const { status, order } = await world.order('collections/mpesa', orderBody(0));

      expect(status).toBe(201);
      await waitFor(
        async () =>
          (await ledgerEntry(order.transactionReference!)).length === 1 ? true : undefined,
        'ledger entry',
        20_000,
      );
      expect(await world.transactions()).toHaveLength(1);
    });
  });
});
