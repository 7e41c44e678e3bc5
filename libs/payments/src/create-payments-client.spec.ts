import { Logger } from '@nestjs/common';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';
import { PaymentsValidationError, ServiceAPIError } from './errors';

describe('createPaymentsClient (no Nest application)', () => {
  let server: RecordingServer;
  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  afterAll(() => server.close());

  it('exposes collections, payouts and defaults, and calls the service', async () => {
    server.reply({ status: 200, body: successBody('payout') });
    const client = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'p',
      baseUrl: server.url,
      walletType: 'USD',
      defaultCallbackUrl: 'https://cb.example.com/hook',
    });

    const response = await client.payouts.mpesa({ ...OPERATION_CASES[3].request, callbackUrl: '' });

    expect(client.defaults).toEqual({
      username: undefined,
      callbackUrl: 'https://cb.example.com/hook',
      walletType: 'USD',
    });
    expect(client.collections.defaults).toBe(client.payouts.defaults);
    expect(response.status).toBe('SUCCESS');
    expect(server.requests[0].json).toMatchObject({
      wallet_type: 'USD',
      callback_url: expect.stringMatching(/^https:\/\/cb\.example\.com\/hook\?malipo_key=/),
    });
  });

  it('validates options like the module', () => {
    expect(() => createPaymentsClient({ apiUsername: 'u', apiPassword: '' })).toThrow(
      PaymentsValidationError,
    );
    expect(() => createPaymentsClient({ apiUsername: 'u', apiPassword: '' })).toThrow(
      /apiPassword/,
    );
  });

  it.each([
    ['84726193', true],
    // Read from a file with its newline: the service, a proxy or a log may echo it trimmed.
    ['84726193\n', true],
    ['8472619a', false],
  ])(
    'warns of a password of digits only, which an amount could equal (%s)',
    async (password, warned) => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      try {
        await createPaymentsClient({
          apiUsername: 'u',
          apiPassword: password,
          baseUrl: server.url,
        }).close();
        expect(warn.mock.calls.some(([message]) => /is all digits/.test(String(message)))).toBe(
          warned,
        );
      } finally {
        warn.mockRestore();
      }
    },
  );

  it("warns of a proxy's password of digits only: it is redacted as the account's is", async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await createPaymentsClient({
        apiUsername: 'u',
        apiPassword: 'letters-and-digits-1',
        baseUrl: 'https://payments.example.com',
        proxy: {
          protocol: 'http',
          host: '127.0.0.1',
          port: 3128,
          auth: { username: 'p', password: '84726193' },
        },
      }).close();
      expect(warn.mock.calls.map(([message]) => String(message))).toEqual(
        expect.arrayContaining([expect.stringMatching(/the proxy's\) is all digits/)]),
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('retries like the module', async () => {
    server.reset();
    server.reply({ status: 500 }, { status: 500 });
    const client = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'p',
      baseUrl: server.url,
      maxRetries: 1,
    });

    await expect(client.collections.mpesa(OPERATION_CASES[0].request)).rejects.toBeInstanceOf(
      ServiceAPIError,
    );
    expect(server.requests).toHaveLength(2);
  });
});
