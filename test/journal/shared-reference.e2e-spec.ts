import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import { executionsOf, journalRejection, startJournalApp } from './journal-kit';
import type { JournalApp } from './journal-kit';

/**
 * A service with a duplicate filter, in front of the sandbox: a payout of a phone and sum it has
 * answered before gets the earlier answer, reference included, and is not executed.
 */
async function startDuplicateFilter(sandboxUrl: string): Promise<{ url: string; server: Server }> {
  const answered = new Map<string, string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const payout = request.method === 'POST' && request.url?.startsWith('/api/v2/withdrawal');
      const wire = payout ? (JSON.parse(body) as { phone_number: string; amount: number }) : null;
      const seen = wire === null ? undefined : `${wire.phone_number}:${wire.amount}`;
      const earlier = seen === undefined ? undefined : answered.get(seen);
      if (earlier !== undefined) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(earlier);
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) {
          headers[name] = value;
        }
      }
      void fetch(`${sandboxUrl}${request.url}`, {
        method: request.method,
        headers,
        ...(request.method === 'POST' ? { body } : {}),
      }).then(async (answer) => {
        const text = await answer.text();
        if (seen !== undefined && answer.status === 200) answered.set(seen, text);
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the payments journal: a service that answers a second call with the first one’s answer', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let filter: { url: string; server: Server };
  let app: JournalApp;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 50 });
    filter = await startDuplicateFilter(sandbox.url);
    app = await startJournalApp({ sandbox, redisUrl: redis.url, client: { baseUrl: filter.url } });
  });
  afterAll(async () => {
    await app?.close();
    filter?.server.closeAllConnections();
    await new Promise((resolve) => filter?.server.close(resolve));
    await sandbox?.close();
    await redis?.close();
  });

  it('books the one transaction to the call that made it, and holds the other in doubt', async () => {
    const payout = {
      phoneNumber: '0712345678',
      amount: 10,
      narration: 'Refund',
      callbackUrl: app.webhookUrl,
    };
    const first = await app.client.payouts.mpesa(payout, { idempotencyKey: 'refund-a' });
    const second = await app.client.payouts.mpesa(payout, { idempotencyKey: 'refund-b' });
    expect(second.transactionReference).toBe(first.transactionReference);

    // The sandbox's webhook of the one transaction settles the call that made it.
    await waitFor(
      async () =>
        (await app.reconciler.get('refund-a'))?.state === 'succeeded' ? true : undefined,
      'refund-a settled by its webhook',
    );
    await app.reconciler.reconcile();

    expect(await executionsOf(sandbox, 'refund-a')).toHaveLength(1);
    expect(await executionsOf(sandbox, 'refund-b')).toHaveLength(0);
    const other = await app.reconciler.get('refund-b');
    expect(other).toMatchObject({ state: 'in_doubt' });
    expect(other?.reference).toBeUndefined();
    expect(other?.reason).toContain('refund-a');
    expect(await app.reconciler.unsettled()).toEqual([
      expect.objectContaining({ idempotencyKey: 'refund-b' }),
    ]);
    // Not answered from the journal as paid, nor sent again unasked.
    const again = await journalRejection(
      app.client.payouts.mpesa(payout, { idempotencyKey: 'refund-b' }),
    );
    expect(again.code).toBe('IN_DOUBT');
  });
});
