import type { PayrollProgress } from '../apps/demo/src/payroll/payroll.service';
import type { PayrollRefusal } from '../apps/demo/src/payroll/payroll-rows';
import { parseCsv } from '../apps/demo/src/payroll/payroll-csv';
import { DemoWithSandbox } from './support/demo-with-sandbox';
import { waitFor } from '../libs/payments/spec-support/wait-for';

const PAN_AFRICAN_COLUMNS =
  'currency,accountHolderName,accountNumber,accountName,transactionChannel,networkCode,channelId,providerName,providerCode';
/** A Nigerian bank of the sandbox's network discovery. */
const NIGERIAN_BANK =
  'NGN,Ada Obi,0123456789,bank,bank,9b2eb62d-555f-4467-8135-16d34d1a5bcf,ba3ec5eb-2a3b-4377-b9fc-78d744eb54c2,Guaranty Trust Bank,058';

/** `count` M-Pesa rows of 100 + i KES to distinct numbers that succeed, header first. */
function mpesaCsv(count: number): string {
  const rows = Array.from(
    { length: count },
    // None ends in 0000, which the sandbox fails.
    (_, i) => `E${i},mpesa,07${String(i).padStart(4, '0')}1234,${100 + i},Salary ${i}`,
  );
  return ['itemId,kind,phoneNumber,amount,narration', ...rows, ''].join('\r\n');
}

describe('demo payroll: a CSV file paid as a payout run, with the sandbox', () => {
  let world: DemoWithSandbox;

  beforeAll(async () => {
    world = await DemoWithSandbox.start();
  });
  beforeEach(() => world.control('reset', 'POST'));
  afterAll(() => world.close());

  /** 201 answers a run, 400 a refusal: a test reads the fields of the one it expects. */
  type Created = PayrollProgress & PayrollRefusal & { runId: string };

  async function postCsv(csv: string, query = ''): Promise<{ status: number; body: Created }> {
    const response = await fetch(`${world.demo.url}/payroll/runs${query}`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: csv,
    });
    return { status: response.status, body: (await response.json()) as Created };
  }

  async function progress(runId: string): Promise<PayrollProgress> {
    const response = await fetch(`${world.demo.url}/payroll/runs/${runId}`);
    expect(response.status).toBe(200);
    return (await response.json()) as PayrollProgress;
  }

  async function act(
    runId: string,
    action: string,
  ): Promise<{ status: number; body: PayrollProgress }> {
    const response = await fetch(`${world.demo.url}/payroll/runs/${runId}/${action}`, {
      method: 'POST',
    });
    return { status: response.status, body: (await response.json()) as PayrollProgress };
  }

  /** Waits until no item of the run is queued, sending or accepted any more. */
  function finished(runId: string): Promise<PayrollProgress> {
    return waitFor(
      async () => {
        const now = await progress(runId);
        return !now.open && now.run.state !== 'running' ? now : undefined;
      },
      `run ${runId} to finish`,
      30_000,
    );
  }

  async function payoutRequests(): Promise<{ method: string; path: string }[]> {
    const requests = await world.control<{ method: string; path: string }[]>('requests');
    return requests.filter((request) => request.method === 'POST');
  }

  it('serves the page, with the columns documented and only its own script allowed', async () => {
    const response = await fetch(`${world.demo.url}/payroll`);
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const nonce = /script-src 'nonce-([^']+)'/.exec(
      response.headers.get('content-security-policy') ?? '',
    )?.[1];
    expect(nonce).toBeDefined();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain('Validate and pay');
    for (const column of ['itemId', 'kind', 'businessAccount', 'networkCode', 'allowDuplicate']) {
      expect(html).toContain(`<code>${column}</code>`);
    }
  });

  it('pays every kind of row and sums each state; the report has a line per row', async () => {
    const csv = [
      `itemId,kind,phoneNumber,amount,narration,walletType,businessAccount,businessNumber,${PAN_AFRICAN_COLUMNS}`,
      `E1,mpesa,0712000001,1000,"Salary, ""March""",,,,,,,,,,,,`,
      'E2,mpesa,+254712000002,2000,Salary,,,,,,,,,,,,',
      // The sandbox fails a number ending in 0000.
      'E3,mpesa,0712340000,3000,Salary,,,,,,,,,,,,',
      'RENT,merchant,+254712345678,750,Rent,,888880,ACC-1,,,,,,,,,',
      `SUP-7,pan-african,+2348031234567,20000,Invoice 7,USD,,,${NIGERIAN_BANK}`,
    ].join('\n');

    const created = await postCsv(csv, '?name=March%20salaries');

    expect(created.status).toBe(201);
    expect(created.body.run).toMatchObject({ runId: created.body.runId, name: 'March salaries' });
    const done = await finished(created.body.runId);
    expect(done).toMatchObject({ total: 5, done: 5, percent: 100, open: false });
    expect(done.run.state).toBe('completed');
    expect(done.states.succeeded).toEqual({ count: 4, amounts: { KES: 3750, NGN: 20000 } });
    expect(done.states.failed).toEqual({ count: 1, amounts: { KES: 3000 } });
    expect(done.attention).toEqual([expect.objectContaining({ itemId: 'E3', state: 'failed' })]);

    // Item keys are derived with a secret (docs/payout-runs.md): the run's items, each once.
    const keys = (await world.transactions())
      .map((transaction) => transaction.idempotencyKey)
      .filter((key) => key?.startsWith(`run-${created.body.runId}-`));
    expect(keys).toHaveLength(5);
    expect(new Set(keys).size).toBe(5);

    const report = await fetch(`${world.demo.url}/payroll/runs/${created.body.runId}/report.csv`);
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(report.headers.get('content-disposition')).toBe(
      `attachment; filename="payroll-${created.body.runId}.csv"`,
    );
    const [header, ...lines] = parseCsv(await report.text()).map((record) => record.cells);
    const state = header.indexOf('state');
    expect(lines.map((cells) => [cells[0], cells[state]])).toEqual([
      ['E1', 'succeeded'],
      ['E2', 'succeeded'],
      ['E3', 'failed'],
      ['RENT', 'succeeded'],
      ['SUP-7', 'succeeded'],
    ]);
    // Why E3 failed, in the service's words from its record, for the people paying the run.
    const reason = header.indexOf('reason');
    expect(lines.find((cells) => cells[0] === 'E3')?.[reason]).toMatch(
      /^failed: (webhook|status), status failed: Transaction failed with message: \[DS timeout user cannot be reached\]$/,
    );
  });

  it('refuses a file with one invalid row, naming line, field and rule; nothing is sent', async () => {
    const csv = [
      'itemId,kind,phoneNumber,amount,narration',
      'E1,mpesa,0712000001,1000,Salary',
      'E2,mpesa,0712000002,5,Salary',
      'E3,mpesa,0712000003,1000,Salary',
    ].join('\n');

    const { status, body } = await postCsv(csv);

    expect(status).toBe(400);
    expect(body.problems).toEqual([
      { itemId: 'E2', field: 'amount', rule: 'min', message: expect.any(String), lines: [3] },
    ]);
    expect(body.shortfalls).toEqual([]);
    expect(body.message).toMatch(/nothing was sent/);
    expect(await payoutRequests()).toEqual([]);
  });

  it('refuses a run the balance does not cover, with both figures; nothing is sent', async () => {
    const { local } = await world.wallets();
    const rows = Array.from({ length: 5 }, (_, i) => `E${i},mpesa,071200000${i},250000,Salary`);

    const { status, body } = await postCsv(
      ['itemId,kind,phoneNumber,amount,narration', ...rows].join('\n'),
    );

    expect(status).toBe(400);
    expect(body.problems).toEqual([]);
    expect(body.shortfalls).toEqual([{ currency: 'KES', required: 1_250_000, available: local }]);
    expect(await payoutRequests()).toEqual([]);
  });

  it('refuses a file that is not readable before looking at its rows', async () => {
    const unknownColumn = await postCsv('itemId,kind,ammount\nE1,mpesa,100\n');
    const brokenQuote = await postCsv('itemId,kind,amount\nE1,mpesa,100\nE2,"mpesa,100\n');

    expect(unknownColumn.status).toBe(400);
    expect(unknownColumn.body.problems).toEqual([
      expect.objectContaining({ field: 'ammount', rule: 'knownColumn', lines: [1] }),
    ]);
    expect(brokenQuote.status).toBe(400);
    expect(brokenQuote.body.problems).toEqual([
      expect.objectContaining({ field: 'file', rule: 'csv', lines: [3] }),
    ]);
    expect(await payoutRequests()).toEqual([]);
  });

  it('pauses, resumes and cancels: queued items are refused, sent ones followed', async () => {
    // One payout a second: the run is far from done when it is paused.
    const created = await postCsv(mpesaCsv(20), '?ratePerSecond=1');
    expect(created.status).toBe(201);
    const runId = created.body.runId;

    const paused = await act(runId, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.run.state).toBe('paused');
    expect((await act(runId, 'pause')).status).toBe(409);
    expect((await act(runId, 'resume')).body.run.state).toBe('running');
    expect((await act(runId, 'pause')).body.run.state).toBe('paused');
    expect((await act(runId, 'cancel')).body.run.state).toBe('cancelled');

    const done = await finished(runId);
    const sent = (await payoutRequests()).length;
    expect(done.run.state).toBe('cancelled');
    expect(done.states.refused.count).toBe(20 - sent);
    expect(done.states.refused.count).toBeGreaterThan(0);
    expect(done.states.succeeded.count).toBe(sent);
    expect((await act(runId, 'resume')).status).toBe(409);
  });

  it('answers 404 for an unknown run, 400 for a malformed id, 415 for a body not CSV', async () => {
    const unknown = await fetch(
      `${world.demo.url}/payroll/runs/00000000-0000-4000-8000-000000000000/report.csv`,
    );
    const malformed = await fetch(`${world.demo.url}/payroll/runs/not-a-run`);
    const json = await fetch(`${world.demo.url}/payroll/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rows: [] }),
    });

    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-disposition')).toBeNull();
    expect(malformed.status).toBe(400);
    expect(json.status).toBe(415);
  });
});
