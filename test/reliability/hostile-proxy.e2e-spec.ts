// Proxies between the library and the service: an environment proxy never sees a plain-http
// call, an https call only opens a tunnel (no credentials, no answer the proxy could forge), and
// an explicit proxy is validated. Environment variables are set per test and restored.
import { createPaymentsClient, PaymentsValidationError } from '@malipo/nestjs';
import type { PaymentsClient, PaymentsModuleOptions } from '@malipo/nestjs';
import { steady } from '../../libs/payments/spec-support/steady';
import {
  answer,
  failure,
  HostileServer,
  NO_PROXY_ENV,
  PASSWORD,
  PAYOUT,
  PAYOUT_ANSWER,
  PAYOUT_REFERENCE,
  RecordingProxy,
  TlsService,
  USERNAME,
  withEnv,
} from './support/hostile';

const TOKEN = Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64');
const clients: PaymentsClient[] = [];
function clientOf(baseUrl: string, options: Partial<PaymentsModuleOptions> = {}): PaymentsClient {
  const client = createPaymentsClient({
    apiUsername: USERNAME,
    apiPassword: PASSWORD,
    baseUrl,
    ...options,
  });
  clients.push(client);
  return client;
}

describe('hostile proxies', () => {
  let proxy: RecordingProxy;
  beforeEach(async () => {
    proxy = await RecordingProxy.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await proxy.close();
  });

  it('sends nothing through HTTP_PROXY / http_proxy for a plain-http baseUrl', async () => {
    const before = [process.env.HTTP_PROXY, process.env.http_proxy];
    const service = await HostileServer.start(answer(PAYOUT_ANSWER));
    try {
      const env = { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, http_proxy: proxy.url };
      const response = await withEnv(env, () => clientOf(service.url).payouts.mpesa(PAYOUT));

      expect(proxy.requests).toHaveLength(0);
      expect(proxy.connects).toHaveLength(0);
      expect(proxy.transcript).not.toContain(TOKEN);
      expect(service.executions).toBe(1);
      expect(service.seen[0].headers.authorization).toBe(`Basic ${TOKEN}`);
      expect(response.transactionReference).toBe(PAYOUT_REFERENCE);
    } finally {
      await service.close();
    }
    expect([process.env.HTTP_PROXY, process.env.http_proxy]).toEqual(before);
  });

  it('the proxy is really used by axios otherwise (control: a plain axios call goes through it)', async () => {
    // Guards the test above against a proxy that would never be used anyway.
    const axios = (await import('axios')).default;
    const env = { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, http_proxy: proxy.url };
    const { data } = await withEnv(env, () =>
      axios.post<{ correlator_id: string }>('http://payments.internal/api', {}),
    );
    expect(proxy.requests).toHaveLength(1);
    expect(data.correlator_id).toBe('FORGEDeW');
  });

  it('never takes an answer from an HTTPS_PROXY that answers CONNECT itself (forged 201)', async () => {
    proxy.onConnect = 'forge';
    const env = { ...NO_PROXY_ENV, HTTPS_PROXY: proxy.url, https_proxy: proxy.url };
    const error = await withEnv(env, () =>
      // The proxy answers at once: a generous timeout, so a busy machine cannot turn it into one.
      failure(clientOf('https://payments.example.com', { timeout: 10_000 }).payouts.mpesa(PAYOUT)),
    );

    expect(error).toMatchObject({ code: 'NETWORK_ERROR', mayHaveExecuted: false, attempts: 3 });
    expect(error.cause).toMatchObject({ code: 'EPROXYTUNNEL' });
    expect(proxy.connects.map((c) => c.url)).toEqual(Array(3).fill('payments.example.com:443'));
    expect(proxy.requests).toHaveLength(0);
    expect(proxy.transcript).not.toContain(TOKEN);
  });

  it('settles a call whose HTTPS_PROXY drops the CONNECT, at the deadline, as not sent', async () => {
    proxy.onConnect = 'refuse';
    const env = { ...NO_PROXY_ENV, HTTPS_PROXY: proxy.url, https_proxy: proxy.url };
    // Nothing ever answers the tunnel: without its deadline the call would never settle, and
    // jest's timeout would fail the test.
    const error = await withEnv(env, () =>
      failure(
        clientOf('https://payments.example.com', { timeout: 1_000, maxRetries: 0 }).payouts.mpesa(
          PAYOUT,
        ),
      ),
    );

    expect(error).toMatchObject({ code: 'TIMEOUT', mayHaveExecuted: false, attempts: 1 });
    const connects = await steady(() => proxy.connects.length, 'the CONNECT to arrive', {
      done: (n) => n >= 1,
    });
    expect(connects).toBe(1);
  });

  it('tunnels an https call through HTTPS_PROXY with TLS end to end: the proxy sees only CONNECT host:443', async () => {
    // The proxy tunnels to a service whose certificate is self-signed. The library refuses it:
    // it checks the certificate of the far end of the tunnel, so the proxy could neither read
    // nor answer the call. (Node reads NODE_TLS_REJECT_UNAUTHORIZED from the real environment,
    // which a jest test cannot change, so the success path is not shown here.)
    const service = await TlsService.start();
    proxy.onConnect = 'tunnel';
    proxy.tunnelTo = service.hostPort;
    try {
      const env = { ...NO_PROXY_ENV, HTTPS_PROXY: proxy.url, https_proxy: proxy.url };
      const error = await withEnv(env, () =>
        failure(clientOf('https://payments.example.com').payouts.mpesa(PAYOUT)),
      );

      expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: false });
      // A TLS handshake with the service itself, through the tunnel; not EPROXYTUNNEL.
      expect(error.cause).toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
      expect(service.refusedHandshakes.length).toBeGreaterThan(0);
      expect(service.seen).toHaveLength(0);
      expect(proxy.connects.map((c) => c.url)).toEqual(Array(3).fill('payments.example.com:443'));
      expect(proxy.connects[0].headers).not.toHaveProperty('authorization');
      expect(proxy.requests).toHaveLength(0);
      expect(proxy.transcript).not.toContain(TOKEN);
    } finally {
      await service.close();
    }
  });

  describe('the explicit proxy option', () => {
    const refusal = (options: Partial<PaymentsModuleOptions>, baseUrl: string) => {
      try {
        clientOf(baseUrl, options);
      } catch (error) {
        return error;
      }
      return undefined;
    };

    it.each([
      ['an empty host', { host: '', port: 3128 }],
      ['a host that is not a string', { host: 42, port: 3128 }],
      ['port 0', { host: 'proxy.internal', port: 0 }],
      ['port 70000', { host: 'proxy.internal', port: 70_000 }],
      ['a fractional port', { host: 'proxy.internal', port: 80.5 }],
      ['an unknown protocol', { host: 'proxy.internal', port: 3128, protocol: 'socks5' }],
      ['a string', 'http://proxy.internal:3128'],
    ])('refuses %s with a PaymentsValidationError naming proxy', (_label, value) => {
      const error = refusal(
        { proxy: value as unknown as PaymentsModuleOptions['proxy'] },
        'https://payments.example.com',
      );
      expect(error).toBeInstanceOf(PaymentsValidationError);
      expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain('proxy');
      expect((error as Error).message).not.toContain(PASSWORD);
    });

    it('refuses a proxy for a plain-http baseUrl (loopback included) unless allowInsecureHttp', () => {
      const proxyOption = { host: 'proxy.internal', port: 3128 };
      for (const baseUrl of ['http://payments.internal', 'http://127.0.0.1:8080']) {
        const error = refusal({ proxy: proxyOption }, baseUrl);
        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain('proxy');
      }
      expect(
        refusal({ proxy: proxyOption, allowInsecureHttp: true }, 'http://payments.internal'),
      ).toBeUndefined();
      expect(refusal({ proxy: proxyOption }, 'https://payments.example.com')).toBeUndefined();
    });

    it('sends through an allowed explicit proxy for plain http (the team chose it)', async () => {
      const response = await clientOf('http://payments.internal', {
        proxy: { host: '127.0.0.1', port: Number(new URL(proxy.url).port) },
        allowInsecureHttp: true,
      }).payouts.mpesa(PAYOUT);
      expect(proxy.requests).toHaveLength(1);
      expect(response.transactionReference).toBe('FORGEDeW');
    });
  });
});
