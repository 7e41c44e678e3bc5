import type { IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
  /** `performance.now()` when the request arrived. */
  at: number;
}

/** What the server does with one request. */
export type Reply =
  | {
      status?: number;
      body?: unknown;
      raw?: string;
      delayMs?: number;
      headers?: Record<string, string>;
      /** Send the headers and a first byte, then nothing for this long, then end. */
      stallAfterHeadersMs?: number;
      /**
       * Send the headers (with a `Content-Length` of the whole body, or chunked) and part of the
       * body, then close the connection.
       */
      cutBody?: 'content-length' | 'chunked';
      /** Answer only once this settled (after `delayMs`, when both are given). */
      after?: Promise<unknown>;
    }
  | { reset: true };

/**
 * A real HTTP server on 127.0.0.1 and an ephemeral port. It answers queued replies in order, then
 * `fallback`, and records every request.
 */
export class RecordingServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Reply[] = [];
  private readonly sockets = new Set<Socket>();
  fallback: (request: RecordedRequest) => Reply = () => ({ status: 200, body: { success: true } });

  private constructor(private readonly server: Server) {}

  static async start(): Promise<RecordingServer> {
    const server = createServer();
    const recording = new RecordingServer(server);
    server.on('connection', (socket) => {
      recording.sockets.add(socket);
      socket.on('close', () => recording.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const recorded: RecordedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          text,
          json,
          at: performance.now(),
        };
        recording.requests.push(recorded);
        recording.answer(recorded, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return recording;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues replies for the next requests, in order. */
  reply(...replies: Reply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Forgets recorded requests and queued replies. */
  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.fallback = () => ({ status: 200, body: { success: true } });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: RecordedRequest, res: ServerResponse): void {
    const reply = this.queue.shift() ?? this.fallback(request);
    if ('reset' in reply) {
      res.socket?.destroy();
      return;
    }
    const send = () => {
      if (res.destroyed) return;
      if (reply.stallAfterHeadersMs !== undefined) {
        res.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json' });
        res.write('{');
        // Unref'd, as the delay below: a late answer must not keep a finished test file's worker alive.
        setTimeout(() => res.end('"success":true}'), reply.stallAfterHeadersMs).unref();
        return;
      }
      const payload = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
      if (reply.cutBody !== undefined) {
        res.writeHead(reply.status ?? 200, {
          'Content-Type': 'application/json',
          ...(reply.cutBody === 'content-length'
            ? { 'Content-Length': String(Buffer.byteLength(payload)) }
            : {}),
        });
        res.write(payload.slice(0, Math.floor(payload.length / 2)));
        setTimeout(() => res.socket?.destroy(), 20).unref();
        return;
      }
      res.writeHead(reply.status ?? 200, {
        'Content-Type': reply.raw === undefined ? 'application/json' : 'text/html',
        ...reply.headers,
      });
      res.end(payload);
    };
    const sendWhenReleased = () => {
      if (reply.after === undefined) send();
      else void reply.after.then(send, send);
    };
    if (reply.delayMs) setTimeout(sendWhenReleased, reply.delayMs).unref();
    else sendWhenReleased();
  }
}
