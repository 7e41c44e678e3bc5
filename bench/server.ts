/**
 * The benchmark's stand-in for the Payments Service, run in a child process so that its CPU is not
 * counted against the clients. It does no work: every request gets the same contract-valid
 * collection record, and the only message to the parent is the port.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The real service's answer to `collections.mpesa` (docs/wire-contract.md). */
export const RESPONSE_RECORD = {
  payment_method: 'mobile',
  status: 'SUCCESS',
  transaction_reference: 'TX-1',
  success: true,
  message: 'Processed successfully',
  trackingId: '',
  reference: '',
  result: null,
} as const;

/** Message the child sends once it listens. */
export interface ServerReady {
  port: number;
}

/** Reply to any message from the parent: the server's own CPU so far, to show it is not the bottleneck. */
export interface ServerCpu {
  cpuMicros: number;
}

// Serialised once so the server's per-request cost stays constant and minimal.
const BODY = Buffer.from(JSON.stringify(RESPONSE_RECORD));
const HEADERS = {
  'Content-Type': 'application/json',
  'Content-Length': String(BODY.length),
};

function main(): void {
  const server = createServer((req, res) => {
    // The body must be drained before the socket can serve the next keep-alive request.
    req.resume();
    req.on('end', () => {
      res.writeHead(200, HEADERS);
      res.end(BODY);
    });
  });
  // Idle gaps between phases (GC, table printing) must not close the clients' pooled sockets.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  server.listen(0, '127.0.0.1', () => {
    const ready: ServerReady = { port: (server.address() as AddressInfo).port };
    process.send?.(ready);
  });
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    const reply: ServerCpu = { cpuMicros: user + system };
    process.send?.(reply);
  });
  // The parent owns the lifetime: exit with it, even if it dies without a signal.
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module) main();
