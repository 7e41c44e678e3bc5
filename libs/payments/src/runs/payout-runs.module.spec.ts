import {
  type DynamicModule,
  type INestApplication,
  Injectable,
  Logger,
  Module,
} from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { getPayoutsToken } from '../payments.decorators';
import { PayoutsService } from '../payouts.service';
import { InMemoryPaymentsJournal } from '../journal/in-memory-payments-journal';
import { PaymentsModule } from '../payments.module';
import type { PaymentsModuleOptions } from '../payments-options.interface';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import { PayoutRunsModule } from './payout-runs.module';
import type { PayoutRunsOptionsFactory } from './payout-runs.module-definition';
import type { PayoutRunsModuleOptions } from './payout-runs.options';
import { PayoutRunsService } from './payout-runs.service';
import type { PayoutRunEngine } from './payout-run-engine';
import { PAYOUT_RUN_ENGINE } from './payout-runs.constants';
import { FakePayments, getFakePaymentsToken, PaymentsTestingModule } from '../testing';
import { waitFor } from '../../spec-support/wait-for';

/** Boots PaymentsModule with `options` and PayoutRunsModule; resolves with the app or rejects. */
async function boot(options: Partial<PaymentsModuleOptions>) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      PaymentsModule.forRoot({ apiUsername: 'u', apiPassword: 'p', ...options }),
      PayoutRunsModule.forRoot({}),
    ],
  }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

/** PaymentsModule with an in-memory journal and a default username, and `options` over them. */
const journaledPayments = (options: Partial<PaymentsModuleOptions> = {}): DynamicModule =>
  PaymentsModule.forRoot({
    apiUsername: 'u',
    apiPassword: 'p',
    defaultUsername: 'shop',
    journal: new InMemoryPaymentsJournal(),
    ...options,
  });

/** One M-Pesa payout, as a run's items. */
const ONE_ITEM = [
  {
    itemId: 'emp-1',
    operation: 'payouts.mpesa' as const,
    request: { phoneNumber: '0712345678', amount: 100, narration: 'Salary' },
  },
];

/**
 * An app of PaymentsTestingModule with a journal, beside `runs` (a PayoutRunsModule registration)
 * and the `others` imported after it.
 */
async function overTheFake(runs: DynamicModule, ...others: DynamicModule[]) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      PaymentsTestingModule.forRoot({
        journal: new InMemoryPaymentsJournal(),
        defaultUsername: 'shop',
        defaultCallbackUrl: 'https://shop.example.com/webhooks/payments',
      }),
      ...others,
      runs,
    ],
  }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

/** Runs {@link ONE_ITEM} in `app` until the service accepted it. */
async function payOneItem(app: INestApplication): Promise<void> {
  const runs = app.get(PayoutRunsService);
  const { runId } = await runs.create({ items: ONE_ITEM });
  await waitFor(
    async () => ((await runs.get(runId)).counts.accepted === 1 ? true : undefined),
    'the item accepted',
    10_000,
  );
}

describe('PayoutRunsModule at boot', () => {
  it('needs the payments journal', async () => {
    const booting = boot({ defaultUsername: 'shop' });
    await expect(booting).rejects.toThrow(/PayoutRunsModule needs the payments journal/);
    await expect(booting).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      target: 'PaymentsModuleOptions',
      errors: [expect.objectContaining({ field: 'journal', rule: 'isNotEmpty' })],
    });
  });

  it.each([undefined, '   '])(
    "needs the account's defaultUsername, which each run's balance check reads (%p)",
    async (defaultUsername) => {
      const booting = boot({ journal: new InMemoryPaymentsJournal(), defaultUsername });
      await expect(booting).rejects.toThrow(
        /checks the balance of the account before each run, by its defaultUsername/,
      );
      await expect(booting).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [expect.objectContaining({ field: 'defaultUsername', rule: 'isNotEmpty' })],
      });
    },
  );

  it('needs a PaymentsModule registration of the account it names', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [journaledPayments(), PayoutRunsModule.forRoot({ account: 'payroll' })],
    }).compile();
    const booting = moduleRef.createNestApplication({ logger: false }).init();
    await expect(booting).rejects.toThrow(
      /PaymentsModule registration named "payroll", and the app has none/,
    );
    await expect(booting).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      target: 'PayoutRunsModuleOptions',
      errors: [expect.objectContaining({ field: 'account', rule: 'isRegistered' })],
    });
  });

  it('warns at boot when item keys would change with the password and runs are kept in memory', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    /** How many times booting so warned. */
    const warnings = async (
      payments: Partial<PaymentsModuleOptions>,
      runs: { itemKeySecret?: string },
    ) => {
      const moduleRef = await Test.createTestingModule({
        imports: [journaledPayments(payments), PayoutRunsModule.forRoot(runs)],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      await app.close();
      const said = warn.mock.calls.filter(([message]) =>
        String(message).includes('item keys derive from apiPassword'),
      );
      warn.mockClear();
      return said.length;
    };
    try {
      expect(await warnings({}, {})).toBe(1);
      expect(await warnings({}, { itemKeySecret: 'the item keys of our payroll' })).toBe(0);
      expect(
        await warnings({ journalFingerprintSecret: 'the fingerprints of our journal' }, {}),
      ).toBe(0);
    } finally {
      warn.mockRestore();
    }
  });

  it('boots with both', async () => {
    const app = await boot({ defaultUsername: 'shop', journal: new InMemoryPaymentsJournal() });
    try {
      expect(app.get(PayoutRunsService)).toBeInstanceOf(PayoutRunsService);
    } finally {
      await app.close();
    }
  });

  it('takes its store and options from forRootAsync, as from ConfigService', async () => {
    const store = new InMemoryPayoutRunStore();
    @Module({
      providers: [{ provide: 'RUNS_CONFIG', useValue: { concurrency: 2, ratePerSecond: 7 } }],
      exports: ['RUNS_CONFIG'],
    })
    class RunsConfigModule {}
    const app = await overTheFake(
      PayoutRunsModule.forRootAsync({
        imports: [RunsConfigModule],
        inject: ['RUNS_CONFIG'],
        useFactory: (config: { concurrency: number; ratePerSecond: number }) => ({
          store,
          ...config,
        }),
      }),
    );
    try {
      const { runId } = await app.get(PayoutRunsService).create({ items: ONE_ITEM });
      expect(await store.getRun(runId)).toMatchObject({ concurrency: 2, ratePerSecond: 7 });
    } finally {
      await app.close();
    }
  });

  it('takes its options from a class given to forRootAsync as useClass', async () => {
    const store = new InMemoryPayoutRunStore();
    @Injectable()
    class RunsConfig implements PayoutRunsOptionsFactory {
      createPayoutRunsOptions(): PayoutRunsModuleOptions {
        return { store, concurrency: 3, ratePerSecond: 9 };
      }
    }
    const app = await overTheFake(PayoutRunsModule.forRootAsync({ useClass: RunsConfig }));
    try {
      const { runId } = await app.get(PayoutRunsService).create({ items: ONE_ITEM });
      expect(await store.getRun(runId)).toMatchObject({ concurrency: 3, ratePerSecond: 9 });
    } finally {
      await app.close();
    }
  });

  it('rejects a run created once the embedded engine closed (a request at shutdown), saying nothing was sent', async () => {
    const app = await overTheFake(PayoutRunsModule.forRoot({}));
    try {
      const runs = app.get(PayoutRunsService);
      const fake = app.get<FakePayments>(getFakePaymentsToken());
      // The app's shutdown closes the engine first; the payments client, and the app's routes,
      // still serve meanwhile.
      await app.get<PayoutRunEngine>(PAYOUT_RUN_ENGINE).close();

      const created = runs.create({ runId: 'at-shutdown', items: ONE_ITEM });
      await expect(created).rejects.toMatchObject({
        name: 'PayoutRunCreationError',
        runId: 'at-shutdown',
        mayHaveExecuted: false,
        message: expect.stringContaining('the app was shutting down'),
      });
      expect(fake.callsOf('payouts.mpesa')).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('answers a run that exists, and stores a cancel, once the embedded engine closed', async () => {
    // Two instances sharing the run store: the run is the first one's.
    const store = new InMemoryPayoutRunStore();
    const first = await overTheFake(PayoutRunsModule.forRoot({ store }));
    const closing = await overTheFake(PayoutRunsModule.forRoot({ store }));
    try {
      const { runId } = await first.get(PayoutRunsService).create({
        runId: 'before-shutdown',
        items: ONE_ITEM,
      });
      await first.get(PayoutRunsService).pause(runId);
      await closing.get<PayoutRunEngine>(PAYOUT_RUN_ENGINE).close();
      const runs = closing.get(PayoutRunsService);

      // It exists (the first instance may be paying it): answered as it is, never "not sent".
      await expect(runs.create({ runId, items: ONE_ITEM })).resolves.toMatchObject({
        runId,
        existing: true,
      });
      await expect(runs.cancel(runId)).resolves.toMatchObject({ state: 'cancelled' });
    } finally {
      await first.close();
      await closing.close();
    }
  });

  it("refuses an item paying from another account than the run's, before anything is read or sent", async () => {
    const app = await overTheFake(PayoutRunsModule.forRoot({}));
    try {
      const fake = app.get<FakePayments>(getFakePaymentsToken());
      const merchant = (itemId: string, username?: string) => ({
        itemId,
        operation: 'payouts.merchant' as const,
        request: {
          amount: 50,
          phoneNumber: '+254712345678',
          narration: 'Stock',
          businessAccount: `1000${itemId.length}`,
          businessNumber: '600100',
          ...(username === undefined ? {} : { username }),
        },
      });
      const items = [merchant('own', 'shop'), merchant('defaulted'), merchant('other', 'big-shop')];
      await expect(app.get(PayoutRunsService).create({ items })).rejects.toMatchObject({
        name: 'PayoutRunRefusedError',
        problems: [
          {
            itemId: 'other',
            field: 'username',
            rule: 'isRunAccount',
            message: expect.not.stringContaining('big-shop'),
          },
        ],
      });
      expect(await app.get(PayoutRunsService).validate({ items })).toMatchObject({
        ok: false,
        problems: [{ itemId: 'other', field: 'username', rule: 'isRunAccount' }],
      });
      // Not even the balance: nothing was asked of the service.
      expect(fake.calls).toEqual([]);
      await expect(
        app.get(PayoutRunsService).validate({ items: items.slice(0, 2) }),
      ).resolves.toMatchObject({ ok: true });
    } finally {
      await app.close();
    }
  });

  it("rejects a resume that another instance's cancel overtook, rather than answer the cancelled run", async () => {
    const store = new InMemoryPayoutRunStore();
    const app = await overTheFake(PayoutRunsModule.forRoot({ store }));
    try {
      const runs = app.get(PayoutRunsService);
      const { runId } = await runs.create({ items: ONE_ITEM });
      await runs.pause(runId);
      // Another instance cancels between this instance's check of the state and its write.
      const updateRun = store.updateRun.bind(store);
      jest.spyOn(store, 'updateRun').mockImplementationOnce(async (id, change, when) => {
        await updateRun(id, { state: 'cancelled' }, { states: ['paused'] });
        return updateRun(id, change, when);
      });
      await expect(runs.resume(runId)).rejects.toMatchObject({
        name: 'PayoutRunStateError',
        state: 'cancelled',
      });
    } finally {
      await app.close();
    }
  });

  it('sends with the unnamed registration when no account is given, beside a named one', async () => {
    const app = await overTheFake(
      PayoutRunsModule.forRoot({}),
      // Imported after: Nest's lookup by class would answer its services.
      PaymentsTestingModule.forRoot({
        name: 'usd',
        journal: new InMemoryPaymentsJournal(),
        defaultUsername: 'usd-shop',
        defaultCallbackUrl: 'https://shop.example.com/webhooks/usd',
      }),
    );
    try {
      await payOneItem(app);
      expect(app.get<FakePayments>(getFakePaymentsToken('usd')).calls).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("sends with the unnamed registration, not a named one's service an app module re-provides under the class", async () => {
    /** A feature module whose classes inject PayoutsService and get the usd account's. */
    @Module({
      imports: [
        PaymentsTestingModule.forRoot({
          name: 'usd',
          journal: new InMemoryPaymentsJournal(),
          defaultUsername: 'usd-shop',
          defaultCallbackUrl: 'https://shop.example.com/webhooks/usd',
        }),
      ],
      providers: [{ provide: PayoutsService, useExisting: getPayoutsToken('usd') }],
      exports: [PayoutsService],
    })
    class UsdPayrollModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        // Before the unnamed registration: the first provider of the class the app holds.
        UsdPayrollModule,
        PaymentsTestingModule.forRoot({
          journal: new InMemoryPaymentsJournal(),
          defaultUsername: 'shop',
          defaultCallbackUrl: 'https://shop.example.com/webhooks/payments',
        }),
        PayoutRunsModule.forRoot({}),
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      await payOneItem(app);
      const operations = (fake: FakePayments) => fake.calls.map((call) => call.operation);
      expect({
        unnamed: operations(app.get<FakePayments>(getFakePaymentsToken())),
        usd: operations(app.get<FakePayments>(getFakePaymentsToken('usd'))),
      }).toEqual({ unnamed: ['balances.all', 'payouts.mpesa'], usd: [] });
    } finally {
      await app.close();
    }
  });

  it('fails the boot, saying why, over an unnamed registration that is request-scoped', async () => {
    const booting = Test.createTestingModule({
      imports: [
        PaymentsModule.forRootAsync({
          inject: [REQUEST],
          useFactory: () => ({
            apiUsername: 'tenant',
            apiPassword: 'tenant-password',
            journal: new InMemoryPaymentsJournal(),
            defaultUsername: 'shop',
          }),
        }),
        PayoutRunsModule.forRoot({}),
      ],
    })
      .compile()
      .then((moduleRef) => moduleRef.createNestApplication({ logger: false }).init());
    await expect(booting).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      target: 'PaymentsModuleOptions',
      errors: [expect.objectContaining({ field: 'inject', rule: 'isStatic' })],
    });
  });

  it('runs over PaymentsTestingModule with a journal, as a unit test of your payroll would', async () => {
    const app = await overTheFake(PayoutRunsModule.forRoot({}));
    try {
      const runs = app.get(PayoutRunsService);
      const { runId } = await runs.create({ items: ONE_ITEM });
      const run = await waitFor(
        async () => {
          const current = await runs.get(runId);
          return current.counts.accepted === 1 ? current : undefined;
        },
        'the item accepted',
        10_000,
      );
      expect(run.counts).toMatchObject({ queued: 0, sending: 0, accepted: 1 });
      expect(app.get(FakePayments).calls.map((call) => call.operation)).toEqual([
        'balances.all',
        'payouts.mpesa',
      ]);
    } finally {
      await app.close();
    }
  });
});
