import { Test } from '@nestjs/testing';
import { InMemoryPaymentsJournal } from '../journal/in-memory-payments-journal';
import { PaymentsModule } from '../payments.module';
import type { PaymentsModuleOptions } from '../payments-options.interface';
import { PayoutRunsModule } from './payout-runs.module';
import { PayoutRunsService } from './payout-runs.service';

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

describe('PayoutRunsModule at boot', () => {
  it('needs the payments journal', async () => {
    await expect(boot({ defaultUsername: 'shop' })).rejects.toThrow(
      /PayoutRunsModule needs the payments journal/,
    );
  });

  it.each([undefined, '   '])(
    "needs the account's defaultUsername, which each run's balance check reads (%p)",
    async (defaultUsername) => {
      await expect(
        boot({ journal: new InMemoryPaymentsJournal(), defaultUsername }),
      ).rejects.toThrow(
        /checks the balance of the account before each run, by its defaultUsername/,
      );
    },
  );

  it('boots with both', async () => {
    const app = await boot({ defaultUsername: 'shop', journal: new InMemoryPaymentsJournal() });
    try {
      expect(app.get(PayoutRunsService)).toBeInstanceOf(PayoutRunsService);
    } finally {
      await app.close();
    }
  });
});
