/**
 * The benchmark's stand-in for the Payments Service, run in a child process so that its CPU is not
 * counted against the clients. It does no work per request beyond draining it and writing a
 * prebuilt answer. It listens on one port per kind of answer, so a client process only needs a
 * base URL to pick one and no mode is shared between clients:
 * - `standard`: the real service's answer to `collections.mpesa` (~200 bytes);
 * - `kb1`, `kb100`: the same record with an extra key padding the body to ~1 KB and ~100 KB;
 * - `hold`: the standard answer, but while holding (POST /_bench/hold) requests are kept
 *   unanswered until POST /_bench/release; GET /_bench/held counts them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RESPONSE_SIZES } from './config';
import {
  HOLD_PATHS,
  paddedRecord,
  RESPONSE_RECORD,
  type ServerCpu,
  type ServerPorts,
  type ServerReady,
} from './server-api';

// Serialised once so the server's per-request cost stays constant and minimal.
function answer(record: object): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify(record));
  return {
    body,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
  };
}

const ANSWERS = {
  standard: answer(RESPONSE_RECORD),
  kb1: answer(paddedRecord(RESPONSE_SIZES.kb1)),
  kb100: answer(paddedRecord(RESPONSE_SIZES.kb100)),
  hold: answer(RESPONSE_RECORD),
};

/** Where the reference's ten digits are in each answer's body. */
const REFERENCE_DIGITS = Object.fromEntries(
  Object.entries(ANSWERS).map(([kind, { body }]) => [kind, body.indexOf('TX-0000000000') + 3]),
) as Record<keyof ServerPorts, number>;
let answered = 0;

/**
 * The answer of `kind` with a reference of its own (the next number over its zeros): the service
 * gives each transaction its own, and a journal keeps it per call. The padded answers, which no
 * journaled client asks for, are sent as built.
 */
function reply(res: ServerResponse, kind: keyof ServerPorts): void {
  const { body, headers } = ANSWERS[kind];
  res.writeHead(200, headers);
  if (kind !== 'standard' && kind !== 'hold') {
    res.end(body);
    return;
  }
  const own = Buffer.from(body);
  answered = (answered + 1) % 10_000_000_000;
  own.write(String(answered).padStart(10, '0'), REFERENCE_DIGITS[kind], 'latin1');
  res.end(own);
}

function holdHandler(): (req: IncomingMessage, res: ServerResponse) => void {
  let holding = false;
  const held: ServerResponse[] = [];
  const control = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { 'Content-Type': 'application/json', Connection: 'close' });
    res.end(JSON.stringify(body));
  };
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === HOLD_PATHS.hold) {
        holding = true;
        control(res, 200, { held: held.length });
      } else if (req.url === HOLD_PATHS.release) {
        holding = false;
        const released = held.splice(0);
        for (const pending of released) reply(pending, 'hold');
        control(res, 200, { released: released.length });
      } else if (req.url === HOLD_PATHS.held) {
        control(res, 200, { held: held.length });
      } else if (holding) {
        held.push(res);
      } else {
        reply(res, 'hold');
      }
    });
  };
}

function listen(kind: keyof ServerPorts): Promise<number> {
  const handler =
    kind === 'hold'
      ? holdHandler()
      : (req: IncomingMessage, res: ServerResponse) => {
          // The body must be drained before the socket can serve the next keep-alive request.
          req.resume();
          req.on('end', () => reply(res, kind));
        };
  const server = createServer(handler);
  // Idle gaps between a client's runs (the other clients' turns) must not close its sockets.
  server.keepAliveTimeout = 600_000;
  server.headersTimeout = 601_000;
  // Held calls wait for the release far longer than any real request would.
  server.requestTimeout = 0;
  return new Promise((resolve) => {
    // A deep backlog: the in-flight measurement opens thousands of connections at once.
    server.listen({ port: 0, host: '127.0.0.1', backlog: 8_192 }, () =>
      resolve((server.address() as AddressInfo).port),
    );
  });
}

async function main(): Promise<void> {
  const kinds = ['standard', 'kb1', 'kb100', 'hold'] as const;
  const ports = Object.fromEntries(
    await Promise.all(kinds.map(async (kind) => [kind, await listen(kind)] as const)),
  ) as ServerPorts;
  const bodyBytes = Object.fromEntries(
    kinds.map((kind) => [kind, ANSWERS[kind].body.length]),
  ) as ServerReady['bodyBytes'];
  const ready: ServerReady = { ports, bodyBytes };
  process.send?.(ready);
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    const cpu: ServerCpu = { cpuMicros: user + system };
    process.send?.(cpu);
  });
  // The parent owns the lifetime: exit with it, even if it dies without a signal.
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module) void main();
