import type { PaymentWebhookEvent } from '@malipo/nestjs/webhooks';
import { Redis } from 'ioredis';
import type { RunningDemo } from '../../apps/demo/src/demo';
import { startDemo } from '../../apps/demo/src/demo';
import { OrderOutcomesHandler } from '../../apps/demo/src/orders/order-outcomes.handler';
import { OrdersService } from '../../apps/demo/src/orders/orders.service';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import {
  RecordingServer,
  type RecordedRequest,
} from '../../libs/payments/spec-support/recording-server';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';

const EVENTS = 20;
const COPIES = 10;
/** How long settling an order takes (a database write in a real shop): copies overlap it. */
const HANDLER_MS = 50;

/**
 * Two demo instances on one Redis and one sandbox, as behind a load balancer. The sandbox's own
 * webhooks go to a recorder (`PAYMENTS_DEFAULT_CALLBACK_URL`), and the test plays the service's
 * deliveries from them: each body as recorded, to the path the sandbox used (with `malipo_key`),
 * on either instance. The status look-ups reach the one sandbox, so both instances confirm alike.
 */
describe('several instances: two demos on one Redis', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let recorder: RecordingServer;
  let demos: RunningDemo[];
  /** Handler calls of each instance, by reference (order settlements and duplicate alarms). */
  let outcomes: Map<string, number>[];
  let alarms: { idempotencyKey: string; references: string[] }[][];
  let restoreSettle: (() => void) | undefined;

  beforeAll(async () => {
    // Before the apps boot: the webhook module takes the handler from the prototype then.
    const settle = OrderOutcomesHandler.prototype.settle;
    // The dispatcher awaits what a handler returns: the slow stand-in returns a promise.
    const slowSettle = async function (this: OrderOutcomesHandler, event: PaymentWebhookEvent) {
      await new Promise((resolve) => setTimeout(resolve, HANDLER_MS));
      settle.call(this, event);
    };
    // `@OnPaymentEvent()` metadata lives on the method: the stand-in needs it too.
    for (const key of Reflect.getMetadataKeys(settle) as unknown[]) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, settle), slowSettle);
    }
    Object.defineProperty(OrderOutcomesHandler.prototype, 'settle', { value: slowSettle });
    restoreSettle = () =>
      Object.defineProperty(OrderOutcomesHandler.prototype, 'settle', { value: settle });
    redis = await RedisServer.start();
    recorder = await RecordingServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 10 });
    demos = await Promise.all(
      [1, 2].map(() =>
        startDemo({
          port: 0,
          logger: false,
          environment: {
            PAYMENTS_API_USERNAME: sandbox.credentials.apiUsername,
            PAYMENTS_API_PASSWORD: sandbox.credentials.apiPassword,
            PAYMENTS_BASE_URL: sandbox.url,
            PAYMENTS_DEFAULT_USERNAME: 'demo-shop',
            PAYMENTS_DEFAULT_CALLBACK_URL: `${recorder.url}/webhooks/payments`,
            REDIS_URL: redis.url,
          },
        }),
      ),
    );
    outcomes = demos.map(() => new Map());
    alarms = demos.map(() => []);
    demos.forEach((demo, i) => {
      const orders = demo.app.get(OrdersService);
      const applyOutcome = orders.applyOutcome.bind(orders);
      jest.spyOn(orders, 'applyOutcome').mockImplementation((event) => {
        const ref = event.transactionReference;
        outcomes[i].set(ref, (outcomes[i].get(ref) ?? 0) + 1);
        return applyOutcome(event);
      });
      const flagDuplicate = orders.flagDuplicate.bind(orders);
      jest.spyOn(orders, 'flagDuplicate').mockImplementation((alarm) => {
        alarms[i].push({ idempotencyKey: alarm.idempotencyKey, references: alarm.references });
        return flagDuplicate(alarm);
      });
    });
  });
  afterAll(async () => {
    restoreSettle?.();
    jest.restoreAllMocks();
    await Promise.all((demos ?? []).map((demo) => demo.close()));
    await sandbox?.close();
    await recorder?.close();
    await redis?.close();
  });

  /** Starts `count` M-Pesa payouts on the instances in turn; their webhooks, once recorded. */
  /** `count` payouts of `amount`, `amount + step`...; their webhooks as the sandbox sent them. */
  async function payouts(count: number, amount: number, step = 1): Promise<RecordedRequest[]> {
    const seen = recorder.requests.length;
    for (let i = 0; i < count; i += 1) {
      const response = await fetch(`${demos[i % 2].url}/orders/payouts/mpesa`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // A phone number ending 0000 fails: some events are failures.
        body: JSON.stringify({
          amount: amount + i * step,
          phoneNumber: i % 4 === 3 ? '0712340000' : '0712345678',
          narration: `Order ${i}`,
        }),
      });
      expect(response.status).toBe(201);
    }
    return waitFor(
      () => (recorder.requests.length >= seen + count ? recorder.requests.slice(seen) : undefined),
      `${count} webhooks from the sandbox`,
      20_000,
    );
  }

  /** One delivery of a recorded webhook to an instance, as the service makes it. */
  async function deliver(
    demo: RunningDemo,
    webhook: { path: string; json: unknown },
  ): Promise<{ status: number; duplicate?: boolean }> {
    const response = await fetch(`${demo.url}${webhook.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(webhook.json),
    });
    const body = (await response.json()) as { duplicate?: boolean };
    return { status: response.status, duplicate: body.duplicate };
  }

  /**
   * Delivers every copy at once, each to its instance, then re-delivers whatever was not answered
   * 2xx (as the service does, to the other instance) until every copy was; tallies the answers.
   * Bounded by time, generously, not by rounds: a busy machine makes the handlers slower, so the
   * copies that find them busy come back more often.
   */
  async function deliverCopies(copies: { webhook: { path: string; json: unknown }; to: number }[]) {
    const tally = { handled: 0, duplicate: 0, busy: 0, other: 0, rounds: 0 };
    let pending = copies;
    const deadline = Date.now() + 30_000;
    while (pending.length > 0 && Date.now() < deadline) {
      const round = tally.rounds;
      tally.rounds += 1;
      const answers = await Promise.all(
        pending.map(({ webhook, to }) => deliver(demos[(to + round) % 2], webhook)),
      );
      for (const answer of answers) {
        if (answer.status === 200 && answer.duplicate === false) tally.handled += 1;
        else if (answer.status === 200) tally.duplicate += 1;
        else if (answer.status === 503) tally.busy += 1;
        else tally.other += 1;
      }
      pending = pending.filter((_, i) => answers[i].status !== 200);
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { ...tally, pending: pending.length };
  }

  it(`runs each handler once for ${EVENTS} events × ${COPIES} concurrent copies over both instances`, async () => {
    const webhooks = await payouts(EVENTS, 100);
    const references = webhooks.map(
      (webhook) => (webhook.json as { transaction_reference: string }).transaction_reference,
    );
    expect(new Set(references).size).toBe(EVENTS);
    // Copy-major order, alternating instances: every event's copies race on both instances.
    const copies = Array.from({ length: COPIES }, (_, copy) =>
      webhooks.map((webhook, event) => ({ webhook, to: (copy + event) % 2 })),
    ).flat();

    const started = Date.now();
    const tally = await deliverCopies(copies);
    const elapsed = Date.now() - started;

    const perEvent = references.map(
      (ref) => (outcomes[0].get(ref) ?? 0) + (outcomes[1].get(ref) ?? 0),
    );
    const perInstance = outcomes.map((counts) => [...counts.values()].reduce((a, b) => a + b, 0));
    console.log(
      `${EVENTS} events × ${COPIES} copies = ${copies.length} deliveries over 2 instances on one ` +
        `Redis, in ${elapsed} ms: ${tally.handled} ran the handlers, ${tally.duplicate} answered ` +
        `200 duplicate, ${tally.busy} answered 503 (held by the other instance) and were ` +
        `re-delivered, ${tally.other} other; ${tally.rounds} round(s). Handler runs per event: ` +
        `min ${Math.min(...perEvent)}, max ${Math.max(...perEvent)}; per instance: ${perInstance.join(' + ')}`,
    );
    expect(tally).toMatchObject({ handled: EVENTS, other: 0, pending: 0 });
    expect(perEvent).toEqual(references.map(() => 1));
    expect(perInstance[0] + perInstance[1]).toBe(EVENTS);
  }, 90_000);

  it('raises payment.duplicate once when two references of one key reach different instances', async () => {
    // Two executions of one call: the service ran the payout twice (two references), and both
    // webhooks carry the call's `malipo_key`. Copies of each reach both instances at once.
    // The same amount twice: an execution of one call again.
    const [first, second] = await payouts(2, 700, 0);
    const key = new URL(first.path, 'http://x').searchParams.get('malipo_key');
    // A second execution by the service has no journal entry of its own (the demos journal on
    // this Redis): the second call's entry is removed, else its reference under the first call's
    // key is a forger's mix of two calls, refused 409 (docs/journal.md).
    const secondKey = new URL(second.path, 'http://x').searchParams.get('malipo_key');
    const secondReference = (second.json as { transaction_reference: string })
      .transaction_reference;
    const redisClient = new Redis(redis.url);
    try {
      expect(
        await redisClient.del(
          `malipo:journal:entry:${secondKey}`,
          `malipo:journal:ref:${secondReference}`,
        ),
      ).toBe(2);
    } finally {
      redisClient.disconnect();
    }
    const secondAsDuplicate = { path: first.path, json: second.json };
    const copies = [first, secondAsDuplicate].flatMap((webhook, i) =>
      [0, 1, 2].map((copy) => ({ webhook, to: (i + copy) % 2 })),
    );

    const tally = await deliverCopies(copies);

    const raised = alarms.flat().filter((alarm) => alarm.idempotencyKey === key);
    console.log(
      `payment.duplicate across instances: 2 references × 3 copies → ${tally.handled} handled, ` +
        `${tally.duplicate} duplicate, ${tally.busy} busy; alarms raised: ${raised.length} ` +
        `(instance 1: ${alarms[0].length}, instance 2: ${alarms[1].length})`,
    );
    expect(tally).toMatchObject({ handled: 2, other: 0, pending: 0 });
    expect(raised).toHaveLength(1);
    expect([...raised[0].references].sort()).toEqual(
      [first, second]
        .map((webhook) => (webhook.json as { transaction_reference: string }).transaction_reference)
        .sort(),
    );
    // The second execution raised the alarm only: the order handlers saw the first one alone.
    const settled = (reference: string) =>
      (outcomes[0].get(reference) ?? 0) + (outcomes[1].get(reference) ?? 0);
    const firstReference = (first.json as { transaction_reference: string }).transaction_reference;
    expect(settled(firstReference)).toBe(1);
    expect(settled(secondReference)).toBe(0);
  }, 90_000);
});
