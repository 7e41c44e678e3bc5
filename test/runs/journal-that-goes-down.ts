import type { PaymentsJournalEntry, PaymentsJournalStore } from '@malipo/nestjs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mixin's base takes any arguments
type JournalStoreClass = new (...args: any[]) => PaymentsJournalStore;

/**
 * `Base`, a journal store that goes down mid-run: after `goDownAfter(n)` and `n` creates, the
 * next ones fail (every other one, the first among them, after the write landed, its answer
 * lost, as a Redis command that ran after the client's timeout) until `up()`. With
 * `undosFail`, the writes that mark such a landed create unsent fail too while it is down (Redis
 * hanging longer than the undo's retries).
 */
export function journalThatGoesDown<TBase extends JournalStoreClass>(Base: TBase) {
  return class JournalThatGoesDown extends Base {
    failedCreates = 0;
    undosFail = false;
    /** Creates left before it goes down; down once it is below 0. */
    upFor = Infinity;

    goDownAfter(creates: number): void {
      this.upFor = creates;
    }

    up(): void {
      this.upFor = Infinity;
    }

    override async create(
      entry: PaymentsJournalEntry,
    ): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
      if (this.upFor-- > 0) return super.create(entry);
      this.failedCreates += 1;
      if (this.failedCreates % 2 === 1) await super.create(entry);
      throw new Error('Command timed out');
    }

    override async replace(next: PaymentsJournalEntry): Promise<boolean> {
      const undo = next.calls.some((call) => call.code === 'JOURNAL_UNAVAILABLE');
      if (undo && this.undosFail && this.upFor < 0) throw new Error('Command timed out');
      return super.replace(next);
    }
  };
}
