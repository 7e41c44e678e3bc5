/**
 * Counts, per run and in this process, the sends in a row that reached the service and ended in
 * doubt (a 5xx, a timeout or a reset: no answer, may have executed). A run that meets `limit` of
 * them is paused: against a service that is down, each further item would only add one more
 * payment that a person must settle by hand (docs/payout-runs.md, "Run states").
 */
export class PayoutRunOutageGuard {
  private readonly streaks = new Map<string, number>();

  /** `limit` sends in a row; 0 never pauses. */
  constructor(readonly limit: number) {}

  /** A send of the run got the service's answer (accepted or refused): the streak ends. */
  answered(runId: string): void {
    this.streaks.delete(runId);
  }

  /** A send of the run reached the service and ended in doubt; true when the run should pause. */
  inDoubt(runId: string): boolean {
    if (this.limit === 0) return false;
    const streak = (this.streaks.get(runId) ?? 0) + 1;
    if (streak < this.limit) {
      this.streaks.set(runId, streak);
      return false;
    }
    this.streaks.delete(runId);
    return true;
  }
}
