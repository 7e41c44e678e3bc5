import { inspect } from 'node:util';
import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps every line, for `Logger.overrideLogger` in tests. */
export class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string; context?: string }[] = [];
  log(message: unknown, context?: string) {
    this.record('log', message, context);
  }
  error(message: unknown, _trace?: string, context?: string) {
    this.record('error', message, context);
  }
  warn(message: unknown, context?: string) {
    this.record('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.record('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.record('verbose', message, context);
  }
  private record(level: string, message: unknown, context?: string) {
    this.lines.push({ level, message: String(message), context });
  }
}

/** Every text a caller could see of an error: message, stack, cause, properties, inspect, JSON. */
export function everythingVisibleIn(error: unknown): string {
  const e = error as Error & Record<string, unknown>;
  return [
    e.message,
    e.stack,
    inspect(e, { depth: 10, showHidden: true }),
    JSON.stringify(e),
    inspect(e.cause, { depth: 10, showHidden: true }),
    ...Object.getOwnPropertyNames(e).map((name) => inspect(e[name], { depth: 10 })),
  ].join('\n');
}
