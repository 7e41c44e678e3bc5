import { payoutRunStoreConformance } from '../testing/payout-run-store.conformance';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';

describe('InMemoryPayoutRunStore', () => {
  const store = new InMemoryPayoutRunStore();

  describe('passes the store conformance cases', () => {
    for (const check of payoutRunStoreConformance()) {
      it(check.name, () => check.run(store));
    }
  });
});
