// Hostile loopback peers for the hostile-*.e2e-spec.ts files: servers that are slow, silent,
// dripping, resetting or echoing, a port that refuses, a listener that never completes a
// connect, and a recording proxy (forward and CONNECT). Every one listens on 127.0.0.1 and an
// ephemeral port, rejects when it cannot start, and closes every socket it accepted.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { Worker } from 'node:worker_threads';
import { PaymentsError, ServiceAPIError } from '@malipo/nestjs';

export const USERNAME = 'api-user';
/** Long enough for every form of it to be redacted (MIN_REDACTED_PASSWORD_LENGTH), with a `/`. */
export const PASSWORD = 'S3cret-P4ss/word';
export const PAYOUT = {
  phoneNumber: '0712345678',
  amount: 1000,
  narration: 'Refund',
  callbackUrl: 'https://shop.example.com/hook',
};
/** The service's answer to a payout (docs/wire-contract.md). */
export const PAYOUT_ANSWER = {
  success: true,
  correlator_id: '9BD1eW',
  message: 'Transaction request sent successfully',
  status: 'SUCCESS',
};
export const PAYOUT_REFERENCE = PAYOUT_ANSWER.correlator_id;
/** A success a proxy makes up. */
export const FORGED_ANSWER = { ...PAYOUT_ANSWER, correlator_id: 'FORGEDeW' };

/** What a hostile server does with one request, once its body was read. */
export type Handler = (res: ServerResponse, req: IncomingMessage, index: number) => void;

/** One request as a hostile server or the proxy saw it. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** `performance.now()` at its arrival. */
  at: number;
}

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function track(server: Server | ReturnType<typeof createTcpServer>, sockets: Set<Socket>): void {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
}

function closeAll(
  server: Server | ReturnType<typeof createTcpServer>,
  sockets: Set<Socket>,
): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A loopback HTTP server answering every request with `handle`; it records the requests. */
export class HostileServer {
  readonly seen: Seen[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    public handle: Handler,
  ) {}

  static async start(handle: Handler): Promise<HostileServer> {
    const server = createServer();
    const port = await listen(server);
    const hostile = new HostileServer(server, `http://127.0.0.1:${port}`, handle);
    track(server, hostile.sockets);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const index = hostile.seen.length;
      hostile.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        at: performance.now(),
      });
      req.resume();
      req.on('end', () => hostile.handle(res, req, index));
    });
    return hostile;
  }

  /** Requests that reached the server: each one an execution for a server ignoring the key. */
  get executions(): number {
    return this.seen.length;
  }

  close(): Promise<void> {
    return closeAll(this.server, this.sockets);
  }
}

/** Answers `body` (JSON unless a string) with `status` after `delayMs`. */
export function answer(body: unknown, status = 200, delayMs = 0, headers = {}): Handler {
  return (res) => {
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  };
}

/** Headers and the first byte of a 200, then one byte every 500 ms (2 bytes/s), never complete. */
export const drip: Handler = (res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
  const timer = setInterval(() => {
    if (!res.destroyed) res.write(' ');
  }, 500);
  res.on('close', () => clearInterval(timer));
};

/** Accepts the request and never answers it. */
export const silent: Handler = () => undefined;

/** Reads the whole request, then resets the connection: it was written, and maybe executed. */
export const resetAfterRead: Handler = (res) => {
  res.socket?.resetAndDestroy();
};

/** A 200 whose headers promise 100 bytes, then 10 bytes and a reset. */
export const truncated: Handler = (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"success"');
  setTimeout(() => res.socket?.resetAndDestroy(), 20);
};

/** A loopback port nothing listens on (it was bound, then closed): connecting is refused. */
export async function refusingUrl(): Promise<string> {
  const server = createTcpServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * A listener whose accept queue is full: a worker thread listens with a backlog of 1 and then
 * blocks its event loop, so nothing is ever accepted; filler connections take the queue's slots,
 * and the kernel drops every later SYN. A connect to it neither succeeds nor fails: it hangs.
 */
export class UnacceptingListener {
  private constructor(
    private readonly worker: Worker,
    private readonly wake: Int32Array,
    private readonly fillers: Socket[],
    readonly url: string,
  ) {}

  static async start(): Promise<UnacceptingListener> {
    const wake = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const server = require('node:net').createServer();
       server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         parentPort.postMessage(server.address().port);
         Atomics.wait(workerData, 0, 0, 30000);
         server.close();
       });`,
      { eval: true, workerData: wake },
    );
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', () => reject(new Error('the unaccepting listener did not start')));
    });
    const listener = new UnacceptingListener(worker, wake, [], `http://127.0.0.1:${port}`);
    // Fill the queue: connect until a connect stays pending (the kernel's queue holds backlog + 1).
    for (let i = 0; i < 5 && !(await listener.connectHangsFor(100)); i += 1);
    return listener;
  }

  /** Whether a new connect to it is still pending after `ms` (the queue really is full). */
  async connectHangsFor(ms: number): Promise<boolean> {
    const probe = connect(Number(new URL(this.url).port), '127.0.0.1');
    const outcome = await new Promise<string>((resolve) => {
      probe.once('connect', () => resolve('connected'));
      probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      setTimeout(() => resolve('pending'), ms);
    });
    if (outcome === 'connected') this.fillers.push(probe);
    else probe.destroy();
    return outcome === 'pending';
  }

  async close(): Promise<void> {
    for (const filler of this.fillers) filler.destroy();
    Atomics.store(this.wake, 0, 1);
    Atomics.notify(this.wake, 0);
    await this.worker.terminate();
  }
}

/**
 * A loopback proxy that records everything it is asked. A plain-http request (forward mode) is
 * answered with `FORGED_ANSWER`. A CONNECT is answered by `onConnect`: `'forge'` plays a made-up
 * success back without a tunnel, `'refuse'` closes the connection, `'tunnel'` opens a real tunnel
 * to `tunnelTo` (host:port).
 */
export class RecordingProxy {
  readonly requests: Seen[] = [];
  readonly connects: Seen[] = [];
  onConnect: 'forge' | 'refuse' | 'tunnel' = 'forge';
  tunnelTo = '';
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<RecordingProxy> {
    const server = createServer();
    const port = await listen(server);
    const proxy = new RecordingProxy(server, `http://127.0.0.1:${port}`);
    track(server, proxy.sockets);
    const record = (req: IncomingMessage): Seen => ({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      at: performance.now(),
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      proxy.requests.push(record(req));
      req.resume();
      req.on('end', () => answer(FORGED_ANSWER)(res, req, 0));
    });
    server.on('connect', (req: IncomingMessage, client: Socket) => {
      proxy.connects.push(record(req));
      proxy.sockets.add(client);
      if (proxy.onConnect === 'refuse') {
        client.destroy();
      } else if (proxy.onConnect === 'forge') {
        const body = JSON.stringify(FORGED_ANSWER);
        client.end(
          `HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      } else {
        const [host, targetPort] = proxy.tunnelTo.split(':');
        const upstream = connect(Number(targetPort), host, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client);
          client.pipe(upstream);
        });
        proxy.sockets.add(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      }
    });
    return proxy;
  }

  /** Everything the proxy received, as text: request lines and headers. */
  get transcript(): string {
    return JSON.stringify([...this.requests, ...this.connects]);
  }

  close(): Promise<void> {
    return closeAll(this.server, this.sockets);
  }
}

// A throw-away self-signed certificate for `localhost` and 127.0.0.1, for the tunnelled service
// only: no client trusts it.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgc6I/ESyN/54nlitQ
x3EksctO9Ze8aHx6rDjKe4B19pqhRANCAAT24ERDiRjMl1UZZAdLPi19txvDmmeS
OT0qIlssiA6DA6DHf3KrLZm787XI/a3D2D5HCtD6mWWHXkUBWCCD+F8x
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBmjCCAUGgAwIBAgIUArkcNyjuIP/O/W9eitTyMeeaecEwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMjEwNDgzOFoYDzIxMjYxMDI5
MTA0ODM4WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAT24ERDiRjMl1UZZAdLPi19txvDmmeSOT0qIlssiA6DA6DHf3KrLZm7
87XI/a3D2D5HCtD6mWWHXkUBWCCD+F8xo28wbTAdBgNVHQ4EFgQUoubR5uZC74Y+
rUI3YZ86ovhTm3kwHwYDVR0jBBgwFoAUoubR5uZC74Y+rUI3YZ86ovhTm3kwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDRwAwRAIgeCIIEgODFGg+Z9IHi4VvGQiPhAq6cZv9KpAGp/s4Gw8CIBnO
WvUvPh2VzfNxl7A7GfRAB5xaBOWP0zMTwY55zGe5
-----END CERTIFICATE-----`;

/**
 * A TLS HTTP server answering `PAYOUT_ANSWER`, reached only through the proxy's tunnel. Its
 * certificate is self-signed, so a client that checks certificates end to end refuses it.
 */
export class TlsService {
  readonly seen: Seen[] = [];
  /** TLS handshakes that failed on the server's side, with the reason. */
  readonly refusedHandshakes: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly tls: ReturnType<typeof createTlsServer>,
    private readonly http: Server,
    readonly hostPort: string,
  ) {}

  static async start(): Promise<TlsService> {
    const http = createServer();
    const tls = createTlsServer({ key: TEST_KEY, cert: TEST_CERT }, (socket) =>
      http.emit('connection', socket),
    );
    const port = await listen(tls);
    const service = new TlsService(tls, http, `127.0.0.1:${port}`);
    track(tls, service.sockets);
    tls.on('tlsClientError', (error: Error) => service.refusedHandshakes.push(error.message));
    http.on('request', (req: IncomingMessage, res: ServerResponse) => {
      service.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        at: performance.now(),
      });
      req.resume();
      req.on('end', () => answer(PAYOUT_ANSWER)(res, req, 0));
    });
    return service;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.tls.close(() => resolve()));
  }
}

/** Runs `body` with environment variables set (`undefined` unsets), then restores them. */
export async function withEnv<T>(
  vars: Record<string, string | undefined>,
  body: () => Promise<T>,
): Promise<T> {
  const saved = Object.keys(vars).map((name) => [name, process.env[name]] as const);
  try {
    for (const [name, value] of Object.entries(vars)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    return await body();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Every proxy variable axios reads, unset, so a test's own setting is the only one. */
export const NO_PROXY_ENV = {
  HTTP_PROXY: undefined,
  http_proxy: undefined,
  HTTPS_PROXY: undefined,
  https_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
  ALL_PROXY: undefined,
  all_proxy: undefined,
};

/** The rejection of `promise`, which must be a `ServiceAPIError` (so a `PaymentsError`). */
export async function failure(promise: Promise<unknown>): Promise<ServiceAPIError> {
  const error: unknown = await promise.then(
    () => new Error('the call resolved'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PaymentsError);
  expect(error).toBeInstanceOf(ServiceAPIError);
  return error as ServiceAPIError;
}

/** Runs `body` and returns its result with the milliseconds it took. */
export async function timed<T>(body: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await body();
  return { result, ms: performance.now() - started };
}
