/**
 * How many of something are in flight, and a promise that resolves once none is: what `close()`
 * waits for. A count rather than a set, so that each call pays for no registration.
 * @internal
 */
export class InFlightCount {
  private count = 0;
  private drain: { promise: Promise<void>; resolve: () => void } | undefined;

  started(): void {
    this.count += 1;
  }

  ended(): void {
    this.count -= 1;
    if (this.count === 0 && this.drain) {
      this.drain.resolve();
      this.drain = undefined;
    }
  }

  /** Resolves once none is in flight. */
  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    if (!this.drain) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.drain = { promise, resolve };
    }
    return this.drain.promise;
  }
}
