import { SandboxConfig } from './sandbox.config';
import { startSandbox } from './sandbox';
import { basicAuth, SandboxClient, startFastSandbox, wireBody } from '../test/sandbox-test-kit';

describe('startSandbox', () => {
  it('listens on an ephemeral loopback port with the default credentials', async () => {
    const sandbox = await startSandbox({ port: 0, logger: false });
    try {
      expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sandbox.credentials).toEqual({
        apiUsername: 'sandbox',
        apiPassword: 'sandbox-secret',
      });
      expect(sandbox.accounts).toEqual([
        { username: 'sandbox', apiUsername: 'sandbox', apiPassword: 'sandbox-secret' },
        { username: 'beta', apiUsername: 'beta', apiPassword: 'beta-secret' },
      ]);
      const wallets = await (await fetch(`${sandbox.url}/__sandbox/wallets`)).json();
      expect(wallets).toEqual({ local: 1_000_000, USD: 10_000, usdRate: 130 });
    } finally {
      await sandbox.close();
    }
  });

  it('takes credentials and rates from options', async () => {
    const sandbox = await startFastSandbox({
      apiUsername: 'me',
      apiPassword: 'pw',
      usdRate: 100,
    });
    try {
      const client = new SandboxClient(sandbox);
      const ok = await client.post('/api/v2/withdrawal', wireBody('payouts.mpesa'), {
        authorization: basicAuth('me', 'pw'),
      });
      const old = await client.post('/api/v2/withdrawal', wireBody('payouts.mpesa'), {
        authorization: basicAuth('sandbox', 'sandbox-secret'),
      });

      expect(ok.status).toBe(200);
      expect(old.status).toBe(401);
      expect((await client.wallets()).usdRate).toBe(100);
    } finally {
      await sandbox.close();
    }
  });

  it('names the default account after accountUsername', async () => {
    const sandbox = await startFastSandbox({ accountUsername: 'demo-shop' });
    try {
      const client = new SandboxClient(sandbox);
      const balances = await client.lookup('/api/v1/accounts/demo-shop/all_balances');
      const old = await client.lookup('/api/v1/accounts/sandbox/all_balances');

      expect(balances.status).toBe(200);
      expect(old.status).toBe(404);
      expect(sandbox.accounts.map((a) => a.username)).toEqual(['demo-shop', 'beta']);
    } finally {
      await sandbox.close();
    }
  });

  it('keeps the state of two sandboxes apart', async () => {
    const [a, b] = await Promise.all([startFastSandbox(), startFastSandbox()]);
    try {
      await new SandboxClient(a).post('/api/v2/withdrawal', wireBody('payouts.mpesa'));

      expect(await new SandboxClient(a).transactions()).toHaveLength(1);
      expect(await new SandboxClient(b).transactions()).toHaveLength(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('closes idempotently and stops listening', async () => {
    const sandbox = await startFastSandbox();

    await Promise.all([sandbox.close(), sandbox.close()]);

    await expect(fetch(`${sandbox.url}/__sandbox/wallets`)).rejects.toThrow();
  });

  it('rejects when the port is taken', async () => {
    const first = await startFastSandbox();
    try {
      const port = Number(new URL(first.url).port);
      await expect(startSandbox({ port, logger: false })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});

describe('SandboxConfig', () => {
  it('reads its defaults from SANDBOX_* variables', () => {
    const config = new SandboxConfig(
      {},
      {
        SANDBOX_PORT: '5050',
        SANDBOX_API_USERNAME: 'env-user',
        SANDBOX_API_PASSWORD: 'env-pass',
        SANDBOX_WEBHOOK_DELAY_MS: '250',
        SANDBOX_ACCOUNT_USERNAME: 'env-account',
      },
    );

    expect(config).toMatchObject({
      port: 5050,
      host: '127.0.0.1',
      apiUsername: 'env-user',
      apiPassword: 'env-pass',
      webhookDelayMs: 250,
      webhookRetryDelaysMs: [500, 1000, 2000],
      usdRate: 130,
      initialBalances: { local: 1_000_000, USD: 10_000 },
    });
    expect(config.accounts.map((a) => [a.username, a.apiUsername, a.apiPassword])).toEqual([
      ['env-account', 'env-user', 'env-pass'],
      ['beta', 'beta', 'beta-secret'],
    ]);
  });

  it('lets options win over the environment', () => {
    const config = new SandboxConfig(
      { port: 0, apiUsername: 'opt', webhookDelayMs: 0 },
      { SANDBOX_PORT: '5050', SANDBOX_API_USERNAME: 'env', SANDBOX_WEBHOOK_DELAY_MS: '9' },
    );

    expect(config).toMatchObject({ port: 0, apiUsername: 'opt', webhookDelayMs: 0 });
  });

  it('uses the built-in defaults without environment', () => {
    expect(new SandboxConfig({}, {})).toMatchObject({
      port: 4010,
      apiUsername: 'sandbox',
      apiPassword: 'sandbox-secret',
      webhookDelayMs: 1000,
    });
  });

  it.each([
    [{}, { SANDBOX_PORT: 'abc' }],
    [{ port: 70_000 }, {}],
    [{ webhookDelayMs: -1 }, {}],
    [{ webhookRetryDelaysMs: [10, Number.NaN] }, {}],
    [{ usdRate: 0 }, {}],
    [{ initialBalances: { local: -1, USD: 0 } }, {}],
    [{ apiPassword: '' }, {}],
    [{ apiUsername: 'beta' }, {}],
    [{ accountUsername: 'beta' }, {}],
  ])('refuses invalid settings %j %j', (options, env) => {
    expect(() => new SandboxConfig(options, env)).toThrow();
  });
});
