// End-to-end check of the built app against the Payments Service sandbox (run after `npm run build`):
// starts @malipo/sandbox on a free port, boots dist/main.js with the environment pointing at it
// (callback URL = the app's own /webhooks/payments), starts one M-Pesa collection through the
// controller, and waits until the sandbox's webhook was confirmed and the handler recorded it.
// A bad amount and the order's key reused with another amount must answer 400 naming the field
// and rule (the README's PaymentsExceptionFilter), and neither may reach the sandbox.
// Exits 0 on success, 1 with a message naming the failed step otherwise.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '@malipo/sandbox';

const appDir = fileURLToPath(new URL('..', import.meta.url));
const TIMEOUT_MS = Number(process.env.E2E_TIMEOUT_MS ?? 30_000);
const started = Date.now();

/** A port nothing listens on right now (the app is told to listen on it). */
async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Polls `check` until it returns a value other than undefined, or fails after the deadline. */
async function waitFor(what, check) {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > TIMEOUT_MS)
      throw new Error(`timed out after ${TIMEOUT_MS} ms waiting for ${what}`);
    await sleep(50);
  }
}

let app;
let appOutput = '';
let sandbox;
try {
  sandbox = await startSandbox({ port: 0, webhookDelayMs: 50, logger: false });
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  app = spawn(process.execPath, ['dist/main.js'], {
    cwd: appDir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PAYMENTS_BASE_URL: sandbox.url,
      PAYMENTS_API_USERNAME: sandbox.credentials.apiUsername,
      PAYMENTS_API_PASSWORD: sandbox.credentials.apiPassword,
      // The default account's username (the sandbox's default: its API username).
      PAYMENTS_DEFAULT_USERNAME: sandbox.accounts?.[0]?.username ?? sandbox.credentials.apiUsername,
      PAYMENTS_DEFAULT_CALLBACK_URL: `${appUrl}/webhooks/payments`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  app.stdout.on('data', (chunk) => (appOutput += chunk));
  app.stderr.on('data', (chunk) => (appOutput += chunk));
  let exited;
  app.once(
    'exit',
    (code, signal) =>
      (exited = `the app exited early (code ${code}, signal ${signal})`),
  );

  const get = async (path) => {
    if (exited) throw new Error(exited);
    return fetch(`${appUrl}${path}`).catch(() => undefined);
  };
  await waitFor('the app to listen', async () =>
    (await get('/checkout/outcomes/none'))?.status === 404 ? true : undefined,
  );

  const checkout = async (body) => {
    const answer = await fetch(`${appUrl}/checkout/mpesa`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: answer.status,
      body: await answer.json().catch(() => ({})),
    };
  };
  /** Throws unless `answer` is a 400 whose `errors` name exactly `field` and `rule`. */
  const expectRefused = (what, answer, field, rule) => {
    const errors = answer.body.errors ?? [];
    if (
      answer.status !== 400 ||
      errors.length !== 1 ||
      errors[0].field !== field ||
      errors[0].rule !== rule
    ) {
      throw new Error(
        `${what} answered ${answer.status} ${JSON.stringify(answer.body)}, not 400 with ${field} ${rule}`,
      );
    }
  };

  const orderId = `e2e-${Date.now()}`;
  // Below the M-Pesa minimum of 10: refused by the library, answered by the filter.
  expectRefused(
    'POST /checkout/mpesa with amount 5',
    await checkout({
      orderId: `${orderId}-low`,
      amount: 5,
      phoneNumber: '0712345678',
    }),
    'amount',
    'min',
  );

  const { status, body: order } = await checkout({
    orderId,
    amount: 1500,
    phoneNumber: '0712345678',
  });
  if (
    status !== 201 ||
    !order.accepted ||
    typeof order.reference !== 'string'
  ) {
    throw new Error(
      `POST /checkout/mpesa answered ${status} ${JSON.stringify(order)}`,
    );
  }
  // The same order (so the same idempotency key) with another amount: another request.
  expectRefused(
    'the same order with another amount',
    await checkout({ orderId, amount: 2500, phoneNumber: '0712345678' }),
    'idempotencyKey',
    'reused',
  );

  const paid = await waitFor(
    `the confirmed webhook of ${order.reference}`,
    async () => {
      const outcome = await get(
        `/checkout/outcomes/${encodeURIComponent(order.reference)}`,
      );
      return outcome?.status === 200 ? outcome.json() : undefined;
    },
  );
  if (paid.orderKey !== `order-${orderId}` || paid.amount !== 1500) {
    throw new Error(`the handler recorded ${JSON.stringify(paid)}`);
  }
  // Only the accepted collection reached the sandbox: the two refusals sent nothing.
  const posted = (await sandbox.control.requests()).filter(
    (request) => request.method === 'POST',
  );
  const transactions = await sandbox.control.transactions();
  if (
    posted.length !== 1 ||
    posted[0].idempotencyKey !== `order-${orderId}` ||
    transactions.length !== 1 ||
    transactions[0].amount !== 1500
  ) {
    throw new Error(
      `the sandbox received ${JSON.stringify(posted)} and holds ${transactions.length} transaction(s)`,
    );
  }
  console.log(
    `e2e OK: ${order.reference} started by POST /checkout/mpesa, confirmed by webhook and handled; amount 5 and a reused key answered 400, unsent; in ${Date.now() - started} ms`,
  );
} catch (error) {
  process.exitCode = 1;
  console.error(
    `e2e FAILED: ${error instanceof Error ? error.message : String(error)}`,
  );
  if (appOutput) console.error(`--- app output ---\n${appOutput.trimEnd()}`);
} finally {
  if (app && app.exitCode === null && app.signalCode === null) {
    app.kill('SIGTERM');
    await Promise.race([
      once(app, 'exit'),
      sleep(5_000).then(() => app.kill('SIGKILL')),
    ]);
  }
  await Promise.race([
    sandbox?.close(),
    sleep(5_000).then(() =>
      console.error('e2e: the sandbox did not close within 5 s'),
    ),
  ]);
}
// Nothing of the test may keep the process alive.
process.exit();
