import type { PaymentsJournalEntry, PaymentsReconcileSummary } from '@malipo/nestjs';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningDemo } from '../../apps/demo/src/demo';
import { startDemo } from '../../apps/demo/src/demo';
import type { SandboxControl } from './sandbox-control';
import { sandboxControl } from './sandbox-control';
import { waitFor } from '../../libs/payments/spec-support/wait-for';

export interface Order {
  id: string;
  operation: string;
  status: string;
  transactionReference?: string;
  checkoutUrl?: string;
  events: { event: string; status: string }[];
}

export interface SandboxTransaction {
  reference: string;
  operation: string;
  status: string;
  amount: number;
  idempotencyKey?: string;
}

/** The sandbox and the demo on ephemeral ports, pointed at each other, with small test helpers. */
export class DemoWithSandbox {
  private constructor(
    readonly sandbox: RunningSandbox,
    readonly demo: RunningDemo,
  ) {}

  static async start(): Promise<DemoWithSandbox> {
    const sandbox = await startSandbox({
      port: 0,
      logger: false,
      // The demo's default username below: balance look-ups (payroll runs) need an account.
      accountUsername: 'demo-shop',
      webhookDelayMs: 30,
      webhookRetryDelaysMs: [20, 40],
    });
    const demo = await startDemo({
      port: 0,
      logger: false,
      environment: {
        PAYMENTS_API_USERNAME: sandbox.credentials.apiUsername,
        PAYMENTS_API_PASSWORD: sandbox.credentials.apiPassword,
        PAYMENTS_BASE_URL: sandbox.url,
        PAYMENTS_DEFAULT_USERNAME: 'demo-shop',
      },
    });
    return new DemoWithSandbox(sandbox, demo);
  }

  async close(): Promise<void> {
    await this.demo.close();
    await this.sandbox.close();
  }

  async order(path: string, body: unknown): Promise<{ status: number; order: Order }> {
    const response = await fetch(`${this.demo.url}/orders/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, order: (await response.json()) as Order };
  }

  async getOrder(id: string): Promise<Order> {
    return (await (await fetch(`${this.demo.url}/orders/${id}`)).json()) as Order;
  }

  /** Waits until the order is settled by a webhook (the bound only ends a broken run). */
  settled(id: string): Promise<Order> {
    return waitFor(
      async () => {
        const order = await this.getOrder(id);
        return ['SUCCESS', 'FAILED'].includes(order.status) ? order : undefined;
      },
      `order ${id} to settle`,
      20_000,
    );
  }

  /** The demo's payments journal (`GET /journal`, `GET /journal/in-doubt`...), parsed. */
  async journal(path = ''): Promise<{ status: number; entries: PaymentsJournalEntry[] }> {
    const response = await fetch(`${this.demo.url}/journal${path}`);
    return { status: response.status, entries: (await response.json()) as PaymentsJournalEntry[] };
  }

  /** A reconcile pass of the demo's journal (`POST /journal/reconcile`). */
  async reconcile(since?: Date): Promise<{ status: number; summary: PaymentsReconcileSummary }> {
    const query = since ? `?since=${encodeURIComponent(since.toISOString())}` : '';
    const response = await fetch(`${this.demo.url}/journal/reconcile${query}`, { method: 'POST' });
    return {
      status: response.status,
      summary: (await response.json()) as PaymentsReconcileSummary,
    };
  }

  /** The sandbox's control API. */
  get control(): SandboxControl {
    return sandboxControl(this.sandbox);
  }

  transactions(): Promise<SandboxTransaction[]> {
    return this.control<SandboxTransaction[]>('transactions');
  }

  wallets(): Promise<{ local: number; USD: number }> {
    return this.control('wallets');
  }
}
