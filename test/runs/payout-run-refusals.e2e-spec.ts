import { PayoutRunRefusedError } from '@malipo/nestjs/runs';
import { completedRun, PayoutRunsHarness } from './payout-runs-harness';

/** All or nothing before money moves: refused runs send nothing to the sandbox. */
describe('refused payout runs (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start({
      sandbox: { initialBalances: { local: 50_000, USD: 100 } },
    });
  });
  afterAll(() => harness?.close());
  beforeEach(() => harness.sandbox.control.reset());

  it('refuses the whole run for one invalid item, with a report, and sends nothing', async () => {
    const items = harness.mpesaItems(50);
    items[17] = {
      ...items[17],
      request: { ...items[17].request, amount: 5, phoneNumber: '12345' },
    };

    const error: unknown = await harness.runs.create({ items }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutRunRefusedError);
    expect((error as PayoutRunRefusedError).problems).toEqual([
      expect.objectContaining({
        itemId: 'emp-17',
        field: 'phoneNumber',
        rule: 'isKenyanPhoneNumber',
      }),
      expect.objectContaining({ itemId: 'emp-17', field: 'amount', rule: 'min' }),
    ]);
    // Not even the balance look-up: validation comes first.
    expect(await harness.sandbox.control.requests()).toEqual([]);
  });

  it('refuses a pace beyond its bounds, or options that are not an object, naming the field and rule, and sends nothing', async () => {
    const items = harness.mpesaItems(2);
    for (const [field, value, rule] of [
      ['concurrency', 1_001, 'max'],
      ['ratePerSecond', 10_001, 'max'],
      ['ratePerSecond', 0.5, 'isPositiveInteger'],
      ['name', 42, 'isString'],
      ['name', 'x'.repeat(256), 'maxLength'],
    ] as const) {
      const error: unknown = await harness.runs
        .create({ items, [field]: value })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PayoutRunRefusedError);
      expect((error as PayoutRunRefusedError).problems).toEqual([
        expect.objectContaining({ itemId: '-', field, rule }),
      ]);
      // validate() says what create() would, for the same options.
      expect(await harness.runs.validate({ items, [field]: value })).toMatchObject({
        ok: false,
        problems: [expect.objectContaining({ itemId: '-', field, rule })],
      });
    }
    for (const options of [undefined, null, 'items', []]) {
      for (const call of [
        harness.runs.create.bind(harness.runs),
        harness.runs.validate.bind(harness.runs),
      ]) {
        const error: unknown = await call(options as never).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PayoutRunRefusedError);
        expect((error as PayoutRunRefusedError).problems).toEqual([
          expect.objectContaining({ field: 'options', rule: 'isObject' }),
        ]);
      }
    }
    expect(await harness.sandbox.control.requests()).toEqual([]);
  });

  it('refuses a key that is not an option (a misspelt runId would give a random id), sending nothing', async () => {
    const items = harness.mpesaItems(2);
    for (const call of [
      harness.runs.create.bind(harness.runs),
      harness.runs.validate.bind(harness.runs),
    ]) {
      // Also held where own enumerable keys do not show it: inherited, or a getter of a class.
      class Options {
        items = items;
        get runID(): string {
          return 'payroll-2026-05';
        }
      }
      for (const options of [
        { runID: 'payroll-2026-05', items },
        Object.assign(Object.create({ runID: 'payroll-2026-05' }) as object, { items }),
        new Options(),
      ]) {
        const error: unknown = await call(options as never).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PayoutRunRefusedError);
        expect((error as PayoutRunRefusedError).problems).toEqual([
          expect.objectContaining({ itemId: '-', field: 'runID', rule: 'whitelist' }),
        ]);
      }
    }
    expect(await harness.sandbox.control.requests()).toEqual([]);
  });

  it('refuses duplicate item ids and look-alike payouts unless allowed, sending nothing', async () => {
    const [first, second] = harness.mpesaItems(2);
    const twin = { ...second, itemId: 'twin', request: { ...second.request } };

    const error = (await harness.runs
      .create({ items: [first, second, { ...first }, twin] })
      .catch((e: unknown) => e)) as PayoutRunRefusedError;

    expect(error.problems.map(({ itemId, field, rule }) => ({ itemId, field, rule }))).toEqual([
      { itemId: 'emp-0', field: 'itemId', rule: 'unique' },
      { itemId: 'emp-0', field: 'request', rule: 'duplicatePayout' },
      { itemId: 'twin', field: 'request', rule: 'duplicatePayout' },
    ]);
    expect(await harness.sandbox.control.requests()).toEqual([]);

    const allowed = await harness.runs.create({
      items: [first, second, { ...twin, allowDuplicate: true }],
    });
    const sent = await completedRun(
      harness.runs,
      allowed.runId,
      'the allowed run settled by its webhooks',
    );
    expect(sent.counts.refused + sent.counts.in_doubt).toBe(0);
  });

  it('refuses a run the balance does not cover, with both figures; goes ahead when told to', async () => {
    const items = harness.mpesaItems(3).map((item) => ({
      ...item,
      request: { ...item.request, amount: 20_000 },
    }));

    const error = (await harness.runs
      .create({ items, allowDuplicates: true })
      .catch((e: unknown) => e)) as PayoutRunRefusedError;

    expect(error).toBeInstanceOf(PayoutRunRefusedError);
    expect(error.shortfalls).toEqual([{ currency: 'KES', required: 60_000, available: 50_000 }]);
    expect(error.message).toMatch(/KES total 60000 exceeds the balance 50000/);
    // Only the balance look-up went out: no payout.
    const requests = await harness.sandbox.control.requests();
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    expect(requests.map((r) => r.path)).toContain('/api/v1/accounts/sandbox/all_balances');

    expect(await harness.runs.validate({ items, allowDuplicates: true })).toMatchObject({
      ok: false,
      shortfalls: [{ currency: 'KES', required: 60_000, available: 50_000 }],
    });
    // validate() says what create() would, for the same options: go ahead, with the shortfall.
    expect(
      await harness.runs.validate({ items, allowDuplicates: true, allowBalanceShortfall: true }),
    ).toMatchObject({
      ok: true,
      shortfalls: [{ currency: 'KES', required: 60_000, available: 50_000 }],
    });
    const run = await harness.runs.create({
      items,
      allowDuplicates: true,
      allowBalanceShortfall: true,
    });
    expect(run.balanceCheck.checked).toEqual([
      { currency: 'KES', required: 60_000, available: 50_000 },
    ]);
  });
});
