import { type INestApplication, Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  InMemoryPaymentsJournal,
  type PaymentsJournalStore,
  PaymentsModule,
  PayoutsService,
} from '@malipo/nestjs';
import {
  OnPaymentEvent,
  type PaymentsWebhookModuleOptions,
  PaymentsWebhookModule,
  type PaymentWebhookEvent,
} from '@malipo/nestjs/webhooks';
import { RedisPaymentsJournal, RedisPaymentsWebhookStore } from '@malipo/nestjs/redis';
import { type RunningSandbox, startSandbox } from '../../apps/sandbox/src/sandbox';
import {
  type RecordedRequest,
  RecordingServer,
} from '../../libs/payments/spec-support/recording-server';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../libs/payments/spec-support/wait-for';

/**
 * A flood of forged webhook deliveries (made-up references, as anyone who learns the webhook URL
 * can post) must cost at most the look-up budget at the service, and a genuine delivery in its
 * middle must still be handled once. The sandbox is the service: its request log counts the
 * status look-ups made with our credentials.
 */
const FORGED = 5000;
const AT_ONCE = 50;
/** The defaults of `lookupBudget` and `foreignLookupBudget`. */
const MAIN = { perSecond: 10, burst: 50 };
const FOREIGN = { perSecond: 1, burst: 5 };

interface Instance {
  app: INestApplication;
  url: string;
  handled: string[];
  payouts: PayoutsService;
  close(): Promise<void>;
}

interface InstanceOptions {
  journal?: () => PaymentsJournalStore;
  redisUrl?: string;
  webhook?: Partial<PaymentsWebhookModuleOptions>;
}

describe('webhooks under a flood of forged deliveries: a bounded look-up budget', () => {
  let sandbox: RunningSandbox;
  let recorder: RecordingServer;
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await RedisServer.start();
    recorder = await RecordingServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 10 });
  });
  afterAll(async () => {
    await sandbox?.close();
    await recorder?.close();
    await redis?.close();
  });
  beforeEach(async () => {
    await sandbox.control.reset();
    await redis.flushAll();
  });

  async function startInstance(options: InstanceOptions): Promise<Instance> {
    const handled: string[] = [];

    @Injectable()
    class Fulfilment {
      @OnPaymentEvent()
      fulfil(event: PaymentWebhookEvent): void {
        handled.push(event.transactionReference);
      }
    }

    const store = options.redisUrl
      ? new RedisPaymentsWebhookStore({ url: options.redisUrl })
      : undefined;
    @Module({
      imports: [
        PaymentsModule.forRoot({
          ...sandbox.credentials,
          baseUrl: sandbox.url,
          defaultUsername: 'flood-shop',
          defaultCallbackUrl: `${recorder.url}/webhooks/payments`,
          ...(options.journal ? { journal: options.journal() } : {}),
        }),
        PaymentsWebhookModule.forRoot({
          ...(store ? { store } : {}),
          // A pending record is answered 503 at once: the test re-delivers.
          pendingRecheckDelaysMs: [],
          ...options.webhook,
        }),
      ],
      providers: [Fulfilment],
    })
    class FloodModule {}

    const app = await NestFactory.create(FloodModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    return {
      app,
      url: `${await app.getUrl()}/webhooks/payments`,
      handled,
      payouts: app.get(PayoutsService),
      close: async () => {
        await app.close();
        await store?.close();
      },
    };
  }

  /** A payout through `instance`, and the webhook the sandbox sent for it. */
  async function genuinePayout(instance: Instance): Promise<RecordedRequest> {
    const seen = recorder.requests.length;
    await instance.payouts.mpesa({
      amount: 100,
      phoneNumber: '0712345678',
      narration: 'Genuine payout',
    });
    return waitFor(
      () => recorder.requests.slice(seen).find((request) => request.path.includes('malipo_key')),
      'the genuine webhook from the sandbox',
      20_000,
    );
  }

  async function post(url: string, body: unknown): Promise<number> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.status;
  }

  /** Status look-ups the sandbox received since its reset. */
  async function lookUps(): Promise<number> {
    const requests = await sandbox.control.requests();
    return requests.filter((request) => request.path.startsWith('/api/v1/status/')).length;
  }

  /**
   * Posts `FORGED` forged deliveries, `AT_ONCE` at a time, spread over `urls`, with the genuine
   * one delivered once in the middle; then delivers the genuine one again (as the service does
   * after a 503) until it is answered 200. Returns the answers and the seconds all that took.
   */
  async function flood(urls: string[], genuine: RecordedRequest) {
    const answers = new Map<number, number>();
    const genuineAnswers: number[] = [];
    const deliverGenuine = async (url: string) => {
      genuineAnswers.push(await post(`${new URL(url).origin}${genuine.path}`, genuine.json));
    };
    const started = performance.now();
    for (let batch = 0; batch < FORGED / AT_ONCE; batch += 1) {
      const statuses = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) => {
          const n = batch * AT_ONCE + i;
          return post(urls[n % urls.length], {
            transaction_reference: `FORGED${String(n).padStart(8, '0')}`,
            result_code: 0,
            success: true,
            amount: 100,
          });
        }),
      );
      for (const status of statuses) answers.set(status, (answers.get(status) ?? 0) + 1);
      if (batch === FORGED / AT_ONCE / 2) await deliverGenuine(urls[0]);
    }
    // Re-delivered until accepted, to each instance in turn; bounded in count, not in time.
    for (let attempt = 0; genuineAnswers.at(-1) !== 200 && attempt < 200; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await deliverGenuine(urls[attempt % urls.length]);
    }
    return { answers, genuineAnswers, seconds: (performance.now() - started) / 1000 };
  }

  /** Look-ups a bucket allows over `seconds`, the genuine event's own included. */
  function allowed(budget: { perSecond: number; burst: number }, seconds: number): number {
    return budget.burst + Math.ceil(budget.perSecond * (seconds + 1));
  }

  it('without the journal, one instance: look-ups within the budget, the genuine event handled once', async () => {
    const instance = await startInstance({});
    try {
      const genuine = await genuinePayout(instance);
      const reference = (genuine.json as { transaction_reference: string }).transaction_reference;
      const { answers, genuineAnswers, seconds } = await flood([instance.url], genuine);
      const spent = await lookUps();
      console.log(
        `flood without the journal: ${FORGED} forged in ${seconds.toFixed(1)} s → ` +
          `${JSON.stringify(Object.fromEntries(answers))}; ${spent} look-ups; genuine answered ` +
          genuineAnswers.join(','),
      );
      // Forged deliveries are refused, never handled: 409 when looked up, 503 when not.
      expect([...answers.keys()].every((status) => status === 409 || status === 503)).toBe(true);
      expect(answers.get(503)).toBeGreaterThan(0);
      // What the budget allows over the flood's length: under 10% of the deliveries for a flood
      // of under 45 s at the default; the length is the machine's, the bound the library's.
      expect(spent).toBeLessThanOrEqual(allowed(MAIN, seconds));
      expect(genuineAnswers.at(-1)).toBe(200);
      expect(instance.handled).toEqual([reference]);
    } finally {
      await instance.close();
    }
  }, 180_000);

  it('with the journal: forged deliveries draw from the small foreign budget, the genuine one is looked up at once', async () => {
    const instance = await startInstance({ journal: () => new InMemoryPaymentsJournal() });
    try {
      const genuine = await genuinePayout(instance);
      const reference = (genuine.json as { transaction_reference: string }).transaction_reference;
      const { answers, genuineAnswers, seconds } = await flood([instance.url], genuine);
      const spent = await lookUps();
      console.log(
        `flood with the journal: ${FORGED} forged in ${seconds.toFixed(1)} s → ` +
          `${JSON.stringify(Object.fromEntries(answers))}; ${spent} look-ups; genuine answered ` +
          genuineAnswers.join(','),
      );
      expect([...answers.keys()].every((status) => status === 409 || status === 503)).toBe(true);
      // The forged ones match no entry: the foreign budget, plus the genuine event's look-up.
      expect(spent).toBeLessThanOrEqual(allowed(FOREIGN, seconds) + 1);
      // Matched by its malipo_key, the genuine event never waits behind the forged ones.
      expect(genuineAnswers).toEqual([200]);
      expect(instance.handled).toEqual([reference]);
    } finally {
      await instance.close();
    }
  }, 180_000);

  it("with the journal and unjournaledEvents: 'refuse': no look-up for a forged delivery", async () => {
    const instance = await startInstance({
      journal: () => new InMemoryPaymentsJournal(),
      webhook: { unjournaledEvents: 'refuse' },
    });
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    try {
      const genuine = await genuinePayout(instance);
      const { answers, genuineAnswers, seconds } = await flood([instance.url], genuine);
      expect(Object.fromEntries(answers)).toEqual({ 409: FORGED });
      expect(genuineAnswers).toEqual([200]);
      expect(await lookUps()).toBe(1);
      expect(instance.handled).toHaveLength(1);
      // A line per refusal would be 5,000 lines: 20 a minute, the rest counted at its end.
      const refusals = warnings.mock.calls.filter(([line]) => String(line).startsWith('Refused a'));
      expect(refusals.length).toBeGreaterThan(0);
      // Each minute the flood touched (it may start late in one) writes 20 at most.
      expect(refusals.length).toBeLessThanOrEqual(20 * (Math.ceil(seconds / 60) + 1));
    } finally {
      warnings.mockRestore();
      await instance.close();
    }
  }, 180_000);

  it('answers a repeated unknown reference 409 from memory, without another look-up', async () => {
    const instance = await startInstance({});
    try {
      const forged = {
        transaction_reference: 'UNKNOWN0000001eW',
        result_code: 0,
        success: true,
        amount: 100,
      };
      const statuses = [];
      for (let copy = 0; copy < 5; copy += 1) statuses.push(await post(instance.url, forged));
      expect(statuses).toEqual([409, 409, 409, 409, 409]);
      expect(await lookUps()).toBe(1);
    } finally {
      await instance.close();
    }
  });

  it('two instances on one Redis share one budget, with and without the journal', async () => {
    for (const journaled of [false, true]) {
      await sandbox.control.reset();
      await redis.flushAll();
      const instances = await Promise.all(
        [0, 1].map(() =>
          startInstance({
            redisUrl: redis.url,
            ...(journaled ? { journal: () => new RedisPaymentsJournal({ url: redis.url }) } : {}),
          }),
        ),
      );
      try {
        const genuine = await genuinePayout(instances[0]);
        const reference = (genuine.json as { transaction_reference: string }).transaction_reference;
        const { answers, genuineAnswers, seconds } = await flood(
          instances.map((instance) => instance.url),
          genuine,
        );
        const spent = await lookUps();
        console.log(
          `flood over two instances on one Redis (${journaled ? 'journal' : 'no journal'}): ` +
            `${FORGED} forged in ${seconds.toFixed(1)} s → ` +
            `${JSON.stringify(Object.fromEntries(answers))}; ${spent} look-ups; genuine answered ` +
            genuineAnswers.join(','),
        );
        expect([...answers.keys()].every((status) => status === 409 || status === 503)).toBe(true);
        // One bucket for both: two would allow twice the burst.
        const budget = journaled ? FOREIGN : MAIN;
        expect(spent).toBeLessThanOrEqual(allowed(budget, seconds) + (journaled ? 1 : 0));
        expect(genuineAnswers.at(-1)).toBe(200);
        expect([...instances[0].handled, ...instances[1].handled]).toEqual([reference]);
      } finally {
        await Promise.all(instances.map((instance) => instance.close()));
      }
    }
  }, 360_000);
});
