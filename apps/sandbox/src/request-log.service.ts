import { Injectable } from '@nestjs/common';

export interface RequestLogEntry {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** ISO arrival time. */
  at: string;
  /** The injected fault, when one hit this request. */
  fault?: string;
}

/** Every request to the API paths, faulted or not, so tests can count a client's attempts. */
@Injectable()
export class RequestLogService {
  private entries: RequestLogEntry[] = [];

  /** The entry stays writable so the fault can be noted once chosen. */
  record(method: string, path: string, idempotencyKey: string | undefined): RequestLogEntry {
    const entry: RequestLogEntry = {
      method,
      path,
      idempotencyKey: idempotencyKey ?? null,
      at: new Date().toISOString(),
    };
    this.entries.push(entry);
    return entry;
  }

  list(): RequestLogEntry[] {
    return this.entries.map((entry) => ({ ...entry }));
  }

  clear(): void {
    this.entries = [];
  }
}
