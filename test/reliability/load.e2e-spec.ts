import type { PaymentsClient } from '@malipo/nestjs';
import { createPaymentsClient, ServiceAPIError } from '@malipo/nestjs';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import { callOperation, OPERATION_CASES } from '../../libs/payments/spec-support/operation-cases';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';
import type { SandboxControl } from '../support/sandbox-control';
import { sandboxControl } from '../support/sandbox-control';

const CALLS = 2_000;
const CONCURRENCY = 100;
const FAULT_RATE = 0.2;

/** Small amounts (within each network's minimum) so 2,000 payouts fit the sandbox wallets. */
const AMOUNTS: Record<string, number> = {
  'collections.mpesa': 10,
  'collections.card': 100,
  'collections.panAfrican': 1,
  'payouts.mpesa': 10,
  'payouts.panAfrican': 100,
  'payouts.merchant': 10,
};

interface LedgerEntry {
  reference: string;
  idempotencyKey?: string;
}

describe('load: 2,000 calls while the sandbox fails 20% of attempts', () => {
  let sandbox: RunningSandbox;
  let webhooks: RecordingServer;
  let client: PaymentsClient;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  let control: SandboxControl;

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    sandbox = await startSandbox({
      port: 0,
      logger: false,
      webhookDelayMs: 200,
      webhookRetryDelaysMs: [],
    });
    control = sandboxControl(sandbox);
    webhooks = await RecordingServer.start();
    client = createPaymentsClient({
      ...sandbox.credentials,
      baseUrl: sandbox.url,
      timeout: 10_000,
    });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await sandbox.close();
    await webhooks.close();
  });

  it('settles every call once, executes each resolved call exactly once, and nothing else', async () => {
    await control('faults/random', 'POST', { rate: FAULT_RATE, reset: true, seed: 20261121 });
    const resolved = new Map<string, string>(); // idempotency key -> transaction reference
    const rejected = new Map<string, ServiceAPIError>();
    const otherFailures: unknown[] = [];
    let next = 0;
    const started = performance.now();

    const worker = async () => {
      while (next < CALLS) {
        const index = next++;
        const testCase = OPERATION_CASES[index % OPERATION_CASES.length];
        const idempotencyKey = `load-${index}`;
        const request = {
          ...testCase.request,
          amount: AMOUNTS[testCase.operation],
          callbackUrl: `${webhooks.url}/hooks`,
        };
        try {
          const response = await callOperation(client, testCase, request, { idempotencyKey });
          resolved.set(idempotencyKey, response.transactionReference as string);
        } catch (error) {
          if (error instanceof ServiceAPIError) rejected.set(idempotencyKey, error);
          else otherFailures.push(error);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const elapsedMs = performance.now() - started;
    await control('faults', 'DELETE');

    const ledger = await control<LedgerEntry[]>('transactions');
    const attempts = await control<{ fault?: string }[]>('requests');
    const ledgerKeys = ledger.map((entry) => entry.idempotencyKey);
    const faulted = attempts.filter((a) => a.fault).length;
    const figures = {
      calls: CALLS,
      concurrency: CONCURRENCY,
      resolved: resolved.size,
      rejected: rejected.size,
      rejectedRetryable: [...rejected.values()].filter(
        (e) => e.status === undefined || e.status >= 500,
      ).length,
      otherFailures: otherFailures.length,
      unhandledRejections: unhandled.length,
      attempts: attempts.length,
      faultedAttempts: faulted,
      observedFaultRate: Number((faulted / attempts.length).toFixed(3)),
      ledgerEntries: ledger.length,
      seconds: Number((elapsedMs / 1000).toFixed(1)),
    };
    process.stdout.write(`\nload figures: ${JSON.stringify(figures)}\n`);

    expect(resolved.size + rejected.size).toBe(CALLS);
    expect(otherFailures).toEqual([]);
    expect(unhandled).toEqual([]);
    expect(figures.faultedAttempts).toBeGreaterThan(0);
    expect(ledger.length).toBe(resolved.size);
    expect(new Set(ledgerKeys).size).toBe(ledger.length);
    expect(new Set(ledger.map((entry) => entry.reference)).size).toBe(ledger.length);
    for (const [key, reference] of resolved) {
      expect(
        ledger.filter((entry) => entry.idempotencyKey === key).map((e) => e.reference),
      ).toEqual([reference]);
    }
    for (const [key, error] of rejected) {
      expect(ledgerKeys).not.toContain(key);
      expect(error.attempts).toBe(3);
    }
  });
});
