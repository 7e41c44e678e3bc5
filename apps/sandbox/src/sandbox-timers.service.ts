import { Injectable, OnModuleDestroy } from '@nestjs/common';

/**
 * Every deferred job of the sandbox (automatic settlements, webhook retries), so that a reset or
 * a close cancels them all and leaves no open handle behind.
 */
@Injectable()
export class SandboxTimers implements OnModuleDestroy {
  private readonly pending = new Set<NodeJS.Timeout>();

  after(delayMs: number, job: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      job();
    }, delayMs);
    this.pending.add(timer);
  }

  cancelAll(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }

  onModuleDestroy(): void {
    this.cancelAll();
  }
}
