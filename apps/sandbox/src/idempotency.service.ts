import { Injectable } from '@nestjs/common';
import type { ApiReply } from './http-io';

export type IdempotencyLookup =
  { kind: 'new' } | { kind: 'replay'; reply: ApiReply } | { kind: 'mismatch' };

/**
 * First accepted answer per `Idempotency-Key`, replayed verbatim for repeats so that a retried
 * payment is never executed twice. Errors are not kept (HTTP 4xx, and HTTP 200 refusals with
 * `success: false`): a corrected retry with the same key must run.
 */
@Injectable()
export class IdempotencyService {
  private readonly replies = new Map<string, { fingerprint: string; reply: ApiReply }>();

  lookup(key: string, fingerprint: string): IdempotencyLookup {
    const stored = this.replies.get(key);
    if (!stored) return { kind: 'new' };
    if (stored.fingerprint !== fingerprint) return { kind: 'mismatch' };
    return { kind: 'replay', reply: structuredClone(stored.reply) };
  }

  remember(key: string, fingerprint: string, reply: ApiReply): void {
    if (reply.status < 200 || reply.status >= 300 || this.replies.has(key)) return;
    const refused =
      typeof reply.body === 'object' &&
      reply.body !== null &&
      (reply.body as { success?: unknown }).success === false;
    if (refused) return;
    this.replies.set(key, { fingerprint, reply: structuredClone(reply) });
  }

  clear(): void {
    this.replies.clear();
  }
}

/** Identifies "the same request": path and body, whatever the key order of the JSON. */
export function requestFingerprint(path: string, body: unknown): string {
  return `${path} ${canonicalJson(body)}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
