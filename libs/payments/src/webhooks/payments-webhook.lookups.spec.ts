import { Logger } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import type { TransactionStatus } from '../dto/lookups';
import { ServiceAPIError } from '../errors';
import { PaymentWebhookBudgetError, PaymentWebhookStoreError } from './payments-webhook.errors';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import { PaymentsWebhookLookups, TokenBucket } from './payments-webhook.lookups';
import { InMemoryPaymentsWebhookStore, type PaymentsWebhookStore } from './payments-webhook.store';
import type { PaymentsWebhookStoreHost } from './payments-webhook.store-host';

function lookups(
  options: PaymentsWebhookModuleOptions = {},
  store: PaymentsWebhookStore = new InMemoryPaymentsWebhookStore(),
): PaymentsWebhookLookups {
  const service = new PaymentsWebhookLookups(options, { store } as PaymentsWebhookStoreHost);
  service.onModuleInit();
  return service;
}

function record(reference: string, status: string): TransactionStatus {
  return {
    code: reference,
    amount: 100,
    transactionDetails: { status },
  } as unknown as TransactionStatus;
}

const notFound = () =>
  new ServiceAPIError('transactions.status was refused with HTTP 404', {
    operation: 'transactions.status',
    idempotencyKey: 'k',
    attempts: 1,
    status: 404,
    code: 'SERVICE_ERROR',
    mayHaveExecuted: false,
  });

describe('TokenBucket', () => {
  it('gives the burst at once, then refills at its rate, never above the burst', () => {
    let now = 0;
    const bucket = new TokenBucket(10, 3, () => now);
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    now = 100; // one token a tenth of a second
    expect([bucket.take(), bucket.take()]).toEqual([true, false]);
    now = 60_000;
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});

describe('PaymentsWebhookLookups', () => {
  afterEach(() => jest.restoreAllMocks());

  it('answers 503 (budget error) without a look-up once the burst is spent', async () => {
    const service = lookups({ lookupBudget: { perSecond: 0.001, burst: 2 } });
    const lookUp = jest.fn((reference: string) => Promise.resolve(record(reference, 'pending')));
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await service.lookUp('R1', 'main', () => lookUp('R1'));
    await service.lookUp('R2', 'main', () => lookUp('R2'));
    await expect(service.lookUp('R3', 'main', () => lookUp('R3'))).rejects.toBeInstanceOf(
      PaymentWebhookBudgetError,
    );
    expect(lookUp).toHaveBeenCalledTimes(2);
    service.onModuleDestroy();
  });

  it('keeps the two budgets apart: the foreign one spent leaves the main one whole', async () => {
    const service = lookups({ foreignLookupBudget: { perSecond: 0.001, burst: 1 } });
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const found = (reference: string) => () => Promise.resolve(record(reference, 'pending'));
    await service.lookUp('F1', 'foreign', found('F1'));
    await expect(service.lookUp('F2', 'foreign', found('F2'))).rejects.toMatchObject({
      budget: 'foreign',
    });
    await expect(service.lookUp('M1', 'main', found('M1'))).resolves.toMatchObject({
      found: true,
    });
    service.onModuleDestroy();
  });

  it('looks a known event up at once, whatever the budgets', async () => {
    const service = lookups({ lookupBudget: { perSecond: 0.001, burst: 1 } });
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const found = (reference: string) => () => Promise.resolve(record(reference, 'pending'));
    await service.lookUp('M1', 'main', found('M1'));
    await expect(service.lookUp('M2', 'main', found('M2'))).rejects.toBeInstanceOf(
      PaymentWebhookBudgetError,
    );
    await expect(service.lookUp('K1', 'known', found('K1'))).resolves.toMatchObject({
      found: true,
    });
    service.onModuleDestroy();
  });

  it('shares one look-up among concurrent deliveries of a reference', async () => {
    const service = lookups({ lookupBudget: { perSecond: 0.001, burst: 1 } });
    let answer!: (value: TransactionStatus) => void;
    const lookUp = jest.fn(() => new Promise<TransactionStatus>((resolve) => (answer = resolve)));
    const copies = [1, 2, 3].map(() => service.lookUp('R1', 'main', lookUp));
    // The token is taken first, a few microtasks before the look-up starts.
    for (let tick = 0; tick < 100 && lookUp.mock.calls.length === 0; tick += 1) {
      await Promise.resolve();
    }
    answer(record('R1', 'pending'));
    const results = await Promise.all(copies);
    expect(lookUp).toHaveBeenCalledTimes(1);
    expect(results.every((result) => result.found)).toBe(true);
  });

  it("does not hand a known delivery the refusal of another budget's look-up of its reference", async () => {
    // A shared budget whose answer (spent) is on its way while the app's own event arrives.
    let answerToken!: (taken: boolean) => void;
    const store = Object.assign(new InMemoryPaymentsWebhookStore(), {
      takeLookupToken: () => new Promise<boolean>((resolve) => (answerToken = resolve)),
    });
    const service = lookups({}, store);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const lookUp = jest.fn(() => Promise.resolve(record('R1', 'success')));

    const forged = service.lookUp('R1', 'foreign', lookUp);
    const own = service.lookUp('R1', 'known', lookUp);
    answerToken(false);

    await expect(forged).rejects.toBeInstanceOf(PaymentWebhookBudgetError);
    await expect(own).resolves.toMatchObject({ found: true });
    expect(lookUp).toHaveBeenCalledTimes(1);
    service.onModuleDestroy();
  });

  it('remembers a final record, and an unknown reference for unknownReferenceTtlMs', async () => {
    const service = lookups();
    const final = jest.fn(() => Promise.resolve(record('R1', 'success')));
    await service.lookUp('R1', 'main', final);
    await expect(service.lookUp('R1', 'main', final)).resolves.toMatchObject({ found: true });
    expect(final).toHaveBeenCalledTimes(1);

    const pending = jest.fn(() => Promise.resolve(record('R2', 'pending')));
    await service.lookUp('R2', 'main', pending);
    await service.lookUp('R2', 'main', pending);
    expect(pending).toHaveBeenCalledTimes(2);

    const unknown = jest.fn(() => Promise.reject(notFound()));
    await expect(service.lookUp('R3', 'main', unknown)).resolves.toEqual({
      found: false,
      remembered: false,
    });
    await expect(service.lookUp('R3', 'main', unknown)).resolves.toEqual({
      found: false,
      remembered: true,
    });
    expect(unknown).toHaveBeenCalledTimes(1);
    // A reference the journal holds is asked about every time, and never remembered as unknown.
    await service.lookUp('R3', 'known', unknown);
    await service.lookUp('R4', 'known', unknown);
    await service.lookUp('R4', 'known', unknown);
    expect(unknown).toHaveBeenCalledTimes(4);

    const forgetful = lookups({ unknownReferenceTtlMs: 0 });
    await forgetful.lookUp('R3', 'main', unknown);
    await forgetful.lookUp('R3', 'main', unknown);
    expect(unknown).toHaveBeenCalledTimes(6);
  });

  it('passes a transient failure on, and remembers nothing of it', async () => {
    const service = lookups();
    const failure = new ServiceAPIError('HTTP 429', {
      operation: 'transactions.status',
      idempotencyKey: 'k',
      attempts: 1,
      status: 429,
      code: 'SERVICE_ERROR',
      mayHaveExecuted: false,
    });
    const lookUp = jest.fn(() => Promise.reject(failure));
    await expect(service.lookUp('R1', 'main', lookUp)).rejects.toBe(failure);
    await expect(service.lookUp('R1', 'main', lookUp)).rejects.toBe(failure);
    expect(lookUp).toHaveBeenCalledTimes(2);
  });

  it('uses the store’s shared budget when it has one, and a 503 when the store fails', async () => {
    const store = new InMemoryPaymentsWebhookStore() as PaymentsWebhookStore;
    const taken: unknown[][] = [];
    store.takeLookupToken = (...args) => {
      taken.push(args);
      return taken.length === 1;
    };
    const service = lookups({}, store);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const found = () => Promise.resolve(record('R1', 'pending'));
    await service.lookUp('R1', 'main', found);
    await expect(service.lookUp('R1', 'main', found)).rejects.toBeInstanceOf(
      PaymentWebhookBudgetError,
    );
    expect(taken).toEqual([
      ['lookups:main', 10, 50],
      ['lookups:main', 10, 50],
    ]);
    store.takeLookupToken = () => Promise.reject(new Error('Redis down'));
    await expect(service.lookUp('R2', 'main', found)).rejects.toBeInstanceOf(
      PaymentWebhookStoreError,
    );
    service.onModuleDestroy();
  });

  it('warns once at the first refusal, then at most once a minute with the count', async () => {
    jest.useFakeTimers();
    try {
      const service = lookups({ lookupBudget: { perSecond: 0.0001, burst: 1 } });
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const found = (reference: string) => () => Promise.resolve(record(reference, 'pending'));
      await service.lookUp('R0', 'main', found('R0'));
      for (let i = 1; i <= 5; i += 1) {
        await service.lookUp(`R${i}`, 'main', found(`R${i}`)).catch(() => undefined);
      }
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toContain('lookupBudget (0.0001/s, burst 1): 1 delivery');
      jest.advanceTimersByTime(60_000);
      expect(warn).toHaveBeenCalledTimes(2);
      expect(warn.mock.calls[1][0]).toContain('4 deliveries');
      jest.advanceTimersByTime(60_000);
      expect(warn).toHaveBeenCalledTimes(2);
      service.onModuleDestroy();
    } finally {
      jest.useRealTimers();
    }
  });

  it('counts the look-ups spent and the deliveries refused as OpenTelemetry metrics', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
    const provider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(provider);
    try {
      const service = lookups({ lookupBudget: { perSecond: 0.001, burst: 2 } });
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const found = (reference: string) => () => Promise.resolve(record(reference, 'pending'));
      await service.lookUp('R1', 'main', found('R1'));
      await service.lookUp('R2', 'main', () => Promise.reject(notFound()));
      await service.lookUp('R2', 'main', found('R2')); // remembered as unknown
      await service.lookUp('R3', 'main', found('R3')).catch(() => undefined); // budget spent
      service.onModuleDestroy();

      await reader.forceFlush();
      const points = (name: string): Record<string, unknown>[] => {
        const found: Record<string, unknown>[] = [];
        for (const resource of exporter.getMetrics()) {
          for (const scope of resource.scopeMetrics) {
            for (const metric of scope.metrics) {
              if (metric.descriptor.name !== name) continue;
              for (const point of metric.dataPoints as { attributes: object; value: unknown }[]) {
                found.push({ ...point.attributes, value: point.value });
              }
            }
          }
        }
        return found;
      };
      expect(points('malipo.webhook.lookups')).toEqual([
        { 'malipo.lookup.budget': 'main', value: 2 },
      ]);
      expect(points('malipo.webhook.lookups.refused')).toEqual(
        expect.arrayContaining([
          { 'malipo.lookup.reason': 'unknown-reference', value: 1 },
          { 'malipo.lookup.reason': 'budget', 'malipo.lookup.budget': 'main', value: 1 },
        ]),
      );
    } finally {
      await provider.shutdown();
      metrics.disable();
    }
  });

  it('gives a key named alone a few look-ups from the main budget, then the foreign one', () => {
    const service = lookups();
    const budgets = Array.from({ length: 7 }, () => service.budgetOfKeyOnly('K1'));
    expect(budgets).toEqual(['main', 'main', 'main', 'main', 'main', 'foreign', 'foreign']);
    expect(service.budgetOfKeyOnly('K2')).toBe('main');
  });

  it('refuses a bad budget at boot, naming the option', () => {
    expect(() => lookups({ lookupBudget: { perSecond: 0 } })).toThrow(
      'lookupBudget.perSecond must be a positive number',
    );
    expect(() => lookups({ foreignLookupBudget: { burst: 1.5 } })).toThrow(
      'foreignLookupBudget.burst must be a positive integer',
    );
    expect(() => lookups({ unknownReferenceTtlMs: -1 })).toThrow('unknownReferenceTtlMs');
  });
});
