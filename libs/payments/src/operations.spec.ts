import { Test } from '@nestjs/testing';
import {
  CALLBACK_URL,
  callOperation,
  correlatedWire,
  OPERATION_CASES,
  successBody,
} from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { PaymentsClient } from './payments-client';
import { PaymentsModule } from './payments.module';
import type { PaymentsModuleOptions } from './payments-options.interface';
import { LIBRARY_VERSION } from './version';

const CREDENTIALS = { apiUsername: 'api-user', apiPassword: 'api-secret-Pa55' };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the six operations over HTTP', () => {
  let server: RecordingServer;

  async function clientWith(options: Partial<PaymentsModuleOptions> = {}): Promise<PaymentsClient> {
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot({ ...CREDENTIALS, baseUrl: server.url, ...options })],
    }).compile();
    return moduleRef.get(PaymentsClient);
  }

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  describe.each(OPERATION_CASES)('$operation', (testCase) => {
    it(`POSTs ${testCase.path} with the contract's headers and body`, async () => {
      server.reply({ status: 200, body: successBody(testCase.kind) });
      const client = await clientWith();

      await callOperation(client, testCase, testCase.request);

      expect(server.requests).toHaveLength(1);
      const [sent] = server.requests;
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe(testCase.path);
      expect(sent.headers.authorization).toBe(
        `Basic ${Buffer.from('api-user:api-secret-Pa55').toString('base64')}`,
      );
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.headers.accept).toBe('application/json');
      expect(sent.headers['user-agent']).toBe(
        `@malipo/nestjs/${LIBRARY_VERSION} node/${process.version}`,
      );
      const key = sent.headers['idempotency-key'] as string;
      expect(key).toMatch(UUID_V4);
      expect(sent.json).toStrictEqual(correlatedWire(testCase.wire, key));
      expect(Object.keys(sent.json as object)).toEqual(Object.keys(testCase.wire));
    });

    it('maps the real answer to the response record and keeps the body in _raw', async () => {
      const body = successBody(testCase.kind);
      server.reply({ status: 200, body });
      const client = await clientWith();

      const response = await callOperation(client, testCase, testCase.request);

      expect(response._raw).toStrictEqual(body);
      expect(response).toMatchObject({
        success: true,
        message: body.message,
        transactionReference: body.transaction_reference ?? body.correlator_id,
        status: 'SUCCESS',
      });
      if (testCase.kind === 'payout') {
        // The wire says channel "" and amount 0: the document's constant and the request's amount.
        expect(response).toMatchObject({
          channel: testCase.operation === 'payouts.mpesa' ? 'MOBILE_MONEY_KE' : '',
          amount: testCase.request.amount,
        });
      } else {
        const paymentMethod = {
          'collections.mpesa': 'MOBILE_MONEY_KE',
          'collections.card': 'card',
        }[testCase.operation as string];
        expect(response).toMatchObject({
          trackingId: '',
          reference: '',
          result: null,
          paymentMethod: paymentMethod ?? 'mobile',
        });
      }
      expect(Object.keys(response).some((key) => key.includes('_') && key !== '_raw')).toBe(false);
    });

    it('uses a caller-supplied idempotency key', async () => {
      server.reply({ status: 200, body: successBody(testCase.kind) });
      const client = await clientWith();

      await callOperation(client, testCase, testCase.request, { idempotencyKey: 'order-42-try-1' });

      expect(server.requests[0].headers['idempotency-key']).toBe('order-42-try-1');
    });

    it('sends a new idempotency key for each logical call', async () => {
      server.fallback = () => ({ status: 200, body: successBody(testCase.kind) });
      const client = await clientWith();

      await callOperation(client, testCase, testCase.request);
      await callOperation(client, testCase, testCase.request);

      const [first, second] = server.requests.map((r) => r.headers['idempotency-key']);
      expect(first).not.toBe(second);
    });

    if ('callbackUrl' in testCase.request) {
      it('fills an empty callbackUrl from defaultCallbackUrl', async () => {
        server.reply({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ defaultCallbackUrl: 'http://localhost:3000/hooks' });

        await callOperation(client, testCase, { ...testCase.request, callbackUrl: '' });

        const key = server.requests[0].headers['idempotency-key'] as string;
        expect(server.requests[0].json).toMatchObject({
          callback_url: `http://localhost:3000/hooks?malipo_key=${key}`,
        });
      });

      it('sends the callbackUrl as given when correlateCallbacks is off', async () => {
        server.reply({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ correlateCallbacks: false });

        await callOperation(client, testCase, testCase.request);

        expect(server.requests[0].json).toStrictEqual(testCase.wire);
      });

      it('keeps a request callbackUrl over the default', async () => {
        server.reply({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ defaultCallbackUrl: 'http://localhost:3000/hooks' });

        await callOperation(client, testCase, testCase.request);

        expect(server.requests[0].json).toMatchObject({
          callback_url: `${CALLBACK_URL}?malipo_key=${server.requests[0].headers['idempotency-key'] as string}`,
        });
      });
    }

    if ('username' in testCase.request) {
      it('fills an empty or absent username from defaultUsername', async () => {
        server.fallback = () => ({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ defaultUsername: 'default-account' });
        const withoutUsername: Record<string, unknown> = { ...testCase.request };
        delete withoutUsername.username;

        await callOperation(client, testCase, { ...testCase.request, username: '' });
        await callOperation(client, testCase, withoutUsername);

        expect(server.requests.map((r) => (r.json as { username: string }).username)).toEqual([
          'default-account',
          'default-account',
        ]);
      });
    } else {
      it('sends no username key', async () => {
        server.reply({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ defaultUsername: 'default-account' });

        await callOperation(client, testCase, testCase.request);

        expect(server.requests[0].json).not.toHaveProperty('username');
      });
    }

    if (testCase.service === 'payouts') {
      it('sends wallet_type "USD" from the request, else from defaults.walletType; local is absence', async () => {
        server.fallback = () => ({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ walletType: 'USD' });
        const { walletType: _omitted, ...withoutWallet } = testCase.request as {
          walletType?: string;
        };

        await callOperation(client, testCase, withoutWallet);
        await callOperation(client, testCase, { ...withoutWallet, walletType: 'local' });

        expect(server.requests.map((r) => (r.json as { wallet_type: string }).wallet_type)).toEqual(
          ['USD', undefined],
        );
      });
    } else {
      it('sends no wallet_type', async () => {
        server.reply({ status: 200, body: successBody(testCase.kind) });
        const client = await clientWith({ walletType: 'USD' });

        await callOperation(client, testCase, testCase.request);

        expect(server.requests[0].json).not.toHaveProperty('wallet_type');
      });
    }
  });

  it('sends redirect_url on a pan-African collection only when given', async () => {
    server.fallback = () => ({ status: 200, body: successBody('collection') });
    const client = await clientWith();
    const request = OPERATION_CASES[2].request;

    await client.collections.panAfrican(request);
    await client.collections.panAfrican({
      ...request,
      redirectUrl: 'https://shop.example.com/done',
    });

    expect(server.requests[0].json).not.toHaveProperty('redirect_url');
    expect(server.requests[1].json).toMatchObject({
      redirect_url: 'https://shop.example.com/done',
    });
  });

  it('maps the bank account and optional checkout URL of a pan-African collection', async () => {
    const body = {
      ...successBody('collection'),
      payment_method: 'BANK_TRANSFER',
      checkout_url: 'https://pay.example.com/c/1',
      bank_account: {
        name: 'Equity',
        branch_code: '068',
        account_number: '0011',
        account_name: 'Acme Ltd',
        account_reference: 'ACME-44',
      },
    };
    server.reply({ status: 200, body });
    const client = await clientWith();

    const response = await client.collections.panAfrican(OPERATION_CASES[2].request);

    expect(response.bankAccount).toStrictEqual({
      name: 'Equity',
      branchCode: '068',
      accountNumber: '0011',
      accountName: 'Acme Ltd',
      accountReference: 'ACME-44',
    });
    expect(response.checkoutUrl).toBe('https://pay.example.com/c/1');
    expect(response.paymentMethod).toBe('BANK_TRANSFER');
  });

  it.each([
    ['transaction_reference', { transaction_reference: 'R-1', correlator_id: 'R-2' }, 'R-1'],
    ['correlator_id', { correlator_id: 'R-2', payd_transaction_ref: 'R-3' }, 'R-2'],
    ['payd_transaction_ref', { transaction_reference: '', payd_transaction_ref: 'R-3' }, 'R-3'],
  ])('reads transactionReference from %s first', async (_label, keys, expected) => {
    server.reply({ status: 200, body: { success: true, status: 'SUCCESS', ...keys } });
    const client = await clientWith();

    const response = await client.payouts.merchant(OPERATION_CASES[5].request);

    expect(response.transactionReference).toBe(expected);
    expect(response.message).toBe('');
  });

  it('reads trackingId from tracking_id when trackingId is absent', async () => {
    const { trackingId: _camel, ...body } = successBody('collection');
    server.reply({ status: 200, body: { ...body, tracking_id: 'TRK-7' } });
    const client = await clientWith();

    const response = await client.collections.mpesa(OPERATION_CASES[0].request);

    expect(response.trackingId).toBe('TRK-7');
  });

  it('keeps a positive payout amount of the wire', async () => {
    server.reply({ status: 200, body: { ...successBody('payout'), amount: 740 } });
    const client = await clientWith();

    const response = await client.payouts.merchant(OPERATION_CASES[5].request);

    expect(response.amount).toBe(740);
  });

  it("keeps the callback URL's own query when it appends malipo_key", async () => {
    server.reply({ status: 200, body: successBody('collection') });
    const client = await clientWith();

    await client.collections.mpesa(
      { ...OPERATION_CASES[0].request, callbackUrl: 'https://shop.example.com/hook?order=7' },
      { idempotencyKey: 'order-7' },
    );

    expect(server.requests[0].json).toMatchObject({
      callback_url: 'https://shop.example.com/hook?order=7&malipo_key=order-7',
    });
  });

  it('returns the card checkout URL', async () => {
    server.reply({ status: 200, body: successBody('card') });
    const client = await clientWith();

    const response = await client.collections.card(OPERATION_CASES[1].request);

    expect(response.checkoutUrl).toBe('https://pay.example.com/checkout/9BD114038965eR');
    expect(response.paymentMethod).toBe('card');
  });

  it('keeps a path prefix of baseUrl', async () => {
    server.reply({ status: 200, body: successBody('payout') });
    const client = await clientWith({ baseUrl: `${server.url}/gateway/` });

    await client.payouts.mpesa(OPERATION_CASES[3].request);

    expect(server.requests[0].path).toBe('/gateway/api/v2/withdrawal');
  });
});
