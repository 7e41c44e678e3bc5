import { type DynamicModule, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { CollectionsService } from './collections.service';
import { InMemoryPaymentsJournal } from './journal/in-memory-payments-journal';
import type {
  PaymentsJournalEntry,
  PaymentsJournalStore,
} from './journal/payments-journal.interfaces';
import { PaymentsClient } from './payments-client';
import { PaymentsModule } from './payments.module';
import type { PaymentsModuleOptions } from './payments-options.interface';
import {
  getPayoutsToken,
  InjectCollections,
  InjectPaymentsClient,
  InjectPayouts,
} from './payments.decorators';
import { PayoutsService } from './payouts.service';

@Injectable()
class Treasury {
  constructor(
    @InjectPayouts('kes') readonly kesPayouts: PayoutsService,
    @InjectPayouts('usd') readonly usdPayouts: PayoutsService,
    @InjectCollections('kes') readonly kesCollections: CollectionsService,
    @InjectPaymentsClient('usd') readonly usdClient: PaymentsClient,
  ) {}
}

describe('several Payments accounts in one app (named registrations)', () => {
  let server: RecordingServer;
  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  // The same factory shape for both, so only `name` keeps the registrations apart.
  const account = (options: Partial<PaymentsModuleOptions>) => () => ({
    apiUsername: 'user',
    apiPassword: 'pass',
    baseUrl: server.url,
    ...options,
  });

  async function treasury(): Promise<Treasury> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRootAsync({
          name: 'kes',
          useFactory: account({
            apiUsername: 'kes-api',
            walletType: 'local',
            defaultUsername: 'kes-business',
            maxRetries: 0,
          }),
        }),
        PaymentsModule.forRootAsync({
          name: 'usd',
          useFactory: account({
            apiUsername: 'usd-api',
            walletType: 'USD',
            defaultUsername: 'usd-business',
            maxRetries: 2,
          }),
        }),
      ],
      providers: [Treasury],
    }).compile();
    return moduleRef.get(Treasury);
  }

  it('injects each account by name, with its own options and defaults', async () => {
    const { kesPayouts, usdPayouts, kesCollections, usdClient } = await treasury();

    expect(kesPayouts).not.toBe(usdPayouts);
    expect(kesPayouts.defaults).toEqual({
      username: 'kes-business',
      callbackUrl: undefined,
      walletType: 'local',
    });
    expect(usdPayouts.defaults).toEqual({
      username: 'usd-business',
      callbackUrl: undefined,
      walletType: 'USD',
    });
    expect(kesCollections.defaults).toBe(kesPayouts.defaults);
    expect(usdClient.payouts).toBe(usdPayouts);
  });

  it('sends each account with its own credentials and wallet', async () => {
    const { kesPayouts, usdPayouts } = await treasury();
    server.fallback = () => ({ status: 200, body: successBody('payout') });

    await kesPayouts.merchant({ ...OPERATION_CASES[5].request, username: '' });
    await usdPayouts.merchant({ ...OPERATION_CASES[5].request, username: '' });

    const basic = (user: string) => `Basic ${Buffer.from(`${user}:pass`).toString('base64')}`;
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      basic('kes-api'),
      basic('usd-api'),
    ]);
    // The local wallet is the absence of wallet_type on the wire.
    expect(
      server.requests.map((r) => {
        const { username, wallet_type } = r.json as Record<string, unknown>;
        return [username, wallet_type];
      }),
    ).toEqual([
      ['kes-business', undefined],
      ['usd-business', 'USD'],
    ]);
  });

  it('keeps retries per account (separate axios instances)', async () => {
    const { kesPayouts, usdPayouts } = await treasury();
    server.fallback = () => ({ status: 503 });

    await expect(kesPayouts.mpesa(OPERATION_CASES[3].request)).rejects.toMatchObject({
      attempts: 1,
    });
    await expect(usdPayouts.mpesa(OPERATION_CASES[3].request)).rejects.toMatchObject({
      attempts: 3,
    });
    expect(server.requests).toHaveLength(4);
  });

  it('exports a named registration only under its named tokens', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot({ apiUsername: 'u', apiPassword: 'p', name: 'kes' })],
    }).compile();

    expect(moduleRef.get(getPayoutsToken('kes'))).toBeInstanceOf(PayoutsService);
    expect(getPayoutsToken()).toBe(PayoutsService);
    @Injectable()
    class WantsUnnamed {
      constructor(readonly payouts: PayoutsService) {}
    }
    await expect(
      Test.createTestingModule({
        imports: [PaymentsModule.forRoot({ apiUsername: 'u', apiPassword: 'p', name: 'kes' })],
        providers: [WantsUnnamed],
      }).compile(),
    ).rejects.toThrow(/PayoutsService/);
  });

  describe('two registrations under one name', () => {
    @Module({
      imports: [PaymentsModule.forRoot({ apiUsername: 'billing', apiPassword: 'billing-secret' })],
    })
    class BillingModule {}

    /** The app's modules booted, as `NestFactory.create` and `app.init()` boot them. */
    const boot = async (...imports: (DynamicModule | (new () => unknown))[]) => {
      const moduleRef = await Test.createTestingModule({ imports }).compile();
      try {
        await moduleRef.init();
      } finally {
        await moduleRef.close();
      }
    };

    it('fails the boot when they are of different accounts, naming what differs but no value', async () => {
      @Module({
        imports: [
          PaymentsModule.forRoot({ apiUsername: 'billing', apiPassword: 'payroll-secret' }),
        ],
      })
      class PayrollModule {}

      const booting = boot(BillingModule, PayrollModule);

      await expect(booting).rejects.toThrow(
        /Two PaymentsModule registrations are named "default" \(or have no name\) with different accounts \(apiPassword differs\).*own name/,
      );
      await booting.catch((error: Error) => {
        expect(error.message).not.toMatch(/secret|billing|payroll/);
        expect(error).toMatchObject({
          name: 'PaymentsValidationError',
          errors: [expect.objectContaining({ field: 'name', rule: 'isUnique' })],
        });
      });
    });

    it('fails the boot for one name given twice to two usernames', async () => {
      await expect(
        boot(
          PaymentsModule.forRoot({ apiUsername: 'kes-api', apiPassword: 'p', name: 'kes' }),
          PaymentsModule.forRootAsync({
            name: 'kes',
            useFactory: () => ({ apiUsername: 'usd-api', apiPassword: 'p', baseUrl: server.url }),
          }),
        ),
      ).rejects.toThrow(/named "kes" with different accounts \(baseUrl, apiUsername differ\)/);
    });

    it('fails the boot when the same account keeps two journals, or one journal and none', async () => {
      const shared = new InMemoryPaymentsJournal();
      const withJournal = (journal?: InMemoryPaymentsJournal, journalFingerprintSecret?: string) =>
        PaymentsModule.forRootAsync({
          useFactory: () => ({
            apiUsername: 'billing',
            apiPassword: 'billing-secret',
            journal,
            journalFingerprintSecret,
          }),
        });
      @Module({
        imports: [
          PaymentsModule.forRoot({
            apiUsername: 'billing',
            apiPassword: 'billing-secret',
            journal: shared,
          }),
        ],
      })
      class JournaledBillingModule {}

      for (const [other, apart] of [
        [withJournal(new InMemoryPaymentsJournal()), /an InMemoryPaymentsJournal each/],
        [withJournal(undefined), /a journal in one and none in the other/],
        [
          withJournal(shared, 'another-secret-of-the-journal'),
          /journalFingerprintSecret set differently/,
        ],
      ] as const) {
        const booting = boot(JournaledBillingModule, other);
        await expect(booting).rejects.toThrow(apart);
        await booting.catch((error: Error) => {
          expect(error.message).toMatch(/would send its key again/);
          expect(error.message).not.toMatch(/billing-secret|another-secret-of-the-journal/);
          expect(error).toMatchObject({
            name: 'PaymentsValidationError',
            errors: [expect.objectContaining({ field: 'journal', rule: 'isShared' })],
          });
        });
      }
      await expect(boot(JournaledBillingModule, withJournal(shared))).resolves.toBeUndefined();
    });

    it('fails the boot when the same account keeps two stores of one kind in two places', async () => {
      /** A store of one kind, as a team's own on its database would be, naming where it keeps. */
      class TableJournal implements PaymentsJournalStore {
        private readonly rows = new InMemoryPaymentsJournal();
        constructor(readonly location?: string) {}
        create(entry: PaymentsJournalEntry) {
          return this.rows.create(entry);
        }
        replace(next: PaymentsJournalEntry) {
          return this.rows.replace(next);
        }
        get(idempotencyKey: string) {
          return this.rows.get(idempotencyKey);
        }
        findByReference(reference: string) {
          return this.rows.findByReference(reference);
        }
        list() {
          return this.rows.list();
        }
      }
      const withStore = (journal: TableJournal) =>
        PaymentsModule.forRootAsync({
          useFactory: () => ({ apiUsername: 'billing', apiPassword: 'billing-secret', journal }),
        });
      const boots = (one: TableJournal, other: TableJournal) =>
        boot(withStore(one), withStore(other));

      const booting = boots(new TableJournal('db-1 journal'), new TableJournal('db-2 journal'));
      await expect(booting).rejects.toThrow(
        /with journals in two places \(db-[12] journal and db-[12] journal\).*send its key again/,
      );
      await booting.catch((error: Error) => {
        expect(error.message).not.toMatch(/billing-secret/);
        expect(error).toMatchObject({
          errors: [expect.objectContaining({ field: 'journal', rule: 'isShared' })],
        });
      });
      // One place, or a place that cannot be told, is one store as far as the boot can know.
      await expect(
        boots(new TableJournal('db-1 journal'), new TableJournal('db-1 journal')),
      ).resolves.toBeUndefined();
      await expect(
        boots(new TableJournal('db-1 journal'), new TableJournal()),
      ).resolves.toBeUndefined();
    });

    it('boots with the same account in two feature modules, or two accounts under two names', async () => {
      @Module({
        imports: [
          PaymentsModule.forRootAsync({
            // The same service whatever its URL's form.
            useFactory: () => ({
              apiUsername: 'billing',
              apiPassword: 'billing-secret',
              baseUrl: 'https://api.payd.money/',
            }),
          }),
        ],
      })
      class RefundsModule {}

      await expect(boot(BillingModule, RefundsModule)).resolves.toBeUndefined();
      await expect(
        boot(
          BillingModule,
          PaymentsModule.forRoot({ apiUsername: 'payroll', apiPassword: 'p', name: 'payroll' }),
        ),
      ).resolves.toBeUndefined();
    });
  });
});
