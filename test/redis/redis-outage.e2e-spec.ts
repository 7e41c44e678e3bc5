import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { waitFor, within } from '../../libs/payments/spec-support/wait-for';
import { createWebhookInstance, type WebhookInstance } from './webhook-instance';

const reference = (i: number) => `9BD8${String(i).padStart(8, '0')}eR`;

/** Delivers `references` to the instances in turn, concurrently; the status of each delivery. */
function deliverAll(
  instances: WebhookInstance[],
  references: string[],
): Promise<{ reference: string; status: number; ms: number }[]> {
  return Promise.all(
    references.map(async (ref, i) => {
      const started = Date.now();
      const status = await instances[i % instances.length].deliver(ref);
      return { reference: ref, status, ms: Date.now() - started };
    }),
  );
}

describe('several instances: Redis stopped during deliveries', () => {
  let redis: RedisServer;
  let instances: WebhookInstance[];

  beforeAll(async () => {
    redis = await RedisServer.start();
    instances = await Promise.all(
      [1, 2].map(() =>
        createWebhookInstance({ redisUrl: redis.url, leaseMs: 5000, handlerMs: 20 }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all((instances ?? []).map((instance) => instance.close()));
    await redis?.close();
  });

  const handledCounts = () => {
    const counts = new Map<string, number>();
    for (const ref of instances.flatMap((instance) => instance.handled)) {
      counts.set(ref, (counts.get(ref) ?? 0) + 1);
    }
    return counts;
  };

  it('answers 503 while Redis is down, then handles the re-deliveries: nothing lost, nothing twice', async () => {
    // Before: events 1-10, two copies each, over both instances.
    const before = Array.from({ length: 10 }, (_, i) => reference(i + 1));
    const beforeAnswers = await deliverAll(instances, [...before, ...before]);
    expect(beforeAnswers.every((answer) => [200, 503].includes(answer.status))).toBe(true);

    // Redis goes away. Events 11-30 arrive, and copies of events 1-10.
    await redis.stop();
    const during = Array.from({ length: 20 }, (_, i) => reference(i + 11));
    const duringAnswers = await deliverAll(instances, [...during, ...before]);
    const duringStatuses = new Set(duringAnswers.map((answer) => answer.status));
    const slowest = Math.max(...duringAnswers.map((answer) => answer.ms));
    expect([...duringStatuses]).toEqual([503]);
    // The events handled are those of the copies answered 200 before the outage (all ten, unless
    // a busy machine held a Redis command past its timeout: that copy was answered 503 and comes
    // back below); none while Redis was down.
    const answeredBefore = beforeAnswers.filter((answer) => answer.status === 200);
    expect(new Set(handledCounts().keys())).toEqual(
      new Set(answeredBefore.map((answer) => answer.reference)),
    );

    // Redis is back; the service re-delivers every delivery not answered 2xx, until each is.
    // Bounded by time, generously: the clients' reconnection takes what it takes.
    await redis.restart();
    let pending = [...beforeAnswers, ...duringAnswers]
      .filter((answer) => answer.status !== 200)
      .map((answer) => answer.reference);
    let rounds = 0;
    const deadline = Date.now() + 30_000;
    while (pending.length > 0 && Date.now() < deadline) {
      rounds += 1;
      const answers = await deliverAll(instances, pending);
      pending = answers.filter((answer) => answer.status !== 200).map((a) => a.reference);
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const counts = handledCounts();
    console.log(
      `Redis outage: ${duringAnswers.length} deliveries while down, all ${[...duringStatuses].join()} ` +
        `(slowest answer ${slowest} ms); after restart, re-delivered in ${rounds} round(s); ` +
        `${counts.size} of 30 events handled, ${[...counts.values()].filter((n) => n > 1).length} more than once`,
    );
    expect(pending).toEqual([]);
    expect(counts.size).toBe(30);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, 90_000);

  it('answers 503 within the command timeout when Redis hangs, then recovers', async () => {
    // Redis stays frozen until every delivery is answered: without the command timeout they would
    // never be, and jest's timeout would fail the test.
    redis.freeze();
    const started = Date.now();
    let statuses: number[];
    try {
      statuses = await Promise.all(
        [0, 1, 2, 3].map((i) => instances[i % 2].deliver(reference(100 + i))),
      );
    } finally {
      redis.thaw();
    }
    const elapsed = Date.now() - started;

    const after = await Promise.all(
      [0, 1, 2, 3].map((i) => instances[(i + 1) % 2].deliver(reference(100 + i))),
    );

    console.log(
      `Redis frozen (SIGSTOP): 4 deliveries answered ${statuses.join(', ')} in ${elapsed} ms ` +
        `(commandTimeout 1000 ms); after SIGCONT: ${after.join(', ')}`,
    );
    expect(statuses).toEqual([503, 503, 503, 503]);
    expect(after).toEqual([200, 200, 200, 200]);
    const counts = handledCounts();
    expect([0, 1, 2, 3].map((i) => counts.get(reference(100 + i)))).toEqual([1, 1, 1, 1]);
  });

  it('acknowledges a delivery whose handler finished while Redis went down, and runs it once', async () => {
    const started: string[] = [];
    // The handler ends when the test says so: once Redis is down, however long stopping it took.
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const slow = await createWebhookInstance({
      redisUrl: redis.url,
      leaseMs: 5000,
      hold: () => finished,
      report: ({ step, reference: ref }) => step === 'started' && started.push(ref),
    });
    try {
      const delivery = slow.deliver(reference(200));
      await waitFor(() => (started.length > 0 ? true : undefined), 'the handler to start', 20_000);
      await within(redis.stop(), 'stopping Redis', 20_000);
      finish();
      const status = await within(delivery, 'the answer to the delivery', 20_000);
      await within(redis.restart(), 'restarting Redis', 20_000);

      console.log(
        `Redis stopped mid-handler: the delivery was answered ${status} (handler ran ` +
          `${slow.handled.length} time); the claim could not be completed and ends with its lease`,
      );
      // A 503 here would bring a re-delivery that, after the lease, ran the handler again.
      expect(status).toBe(200);
      expect(slow.handled).toEqual([reference(200)]);
    } finally {
      // A step that failed before finish() leaves the delivery held, and the close would wait
      // for it: the failure would be jest's timeout instead of its own.
      finish();
      await within(slow.close(), 'closing the instance', 20_000);
    }
  }, 90_000);
});
