/**
 * A value from a delivery, fit for a log line: the reference and key come from whoever posted the
 * webhook, so control characters (forged log lines, terminal escapes) and length are bounded.
 */
export function forLog(value: string, max = 64): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > max ? `${printable.slice(0, max)}...` : printable;
}

/** Lines a {@link ThrottledWarnings} writes in a minute before it only counts. */
const WARNINGS_PER_MINUTE = 20;
const MINUTE_MS = 60_000;

/**
 * Warnings about deliveries, which anyone who can reach the webhook route can cause: the first
 * {@link WARNINGS_PER_MINUTE} of a minute are written, the rest counted and summed up in one
 * line when the minute ends, so that a flood of forged deliveries cannot flood the logs.
 */
export class ThrottledWarnings {
  private written = 0;
  private withheld = 0;
  private minute: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: { warn(message: string): void },
    /** What the summary line counts, e.g. "webhook refusals and deferrals". */
    private readonly what: string,
  ) {}

  warn(message: string): void {
    if (this.minute === undefined) {
      this.minute = setTimeout(() => this.endMinute(), MINUTE_MS);
      this.minute.unref();
    }
    if (this.written < WARNINGS_PER_MINUTE) {
      this.written += 1;
      this.logger.warn(message);
    } else {
      this.withheld += 1;
    }
  }

  private endMinute(): void {
    if (this.withheld > 0) {
      this.logger.warn(
        `${this.withheld} more ${this.what} in the last minute, not logged one by one ` +
          `(more than ${WARNINGS_PER_MINUTE} a minute: a flood of forged deliveries?)`,
      );
    }
    this.written = 0;
    this.withheld = 0;
    this.minute = undefined;
  }
}
