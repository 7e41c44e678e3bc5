/**
 * Collections against the real service's recorded examples (docs/wire-contract.md, "Request
 * bodies" and "Responses of the six operations").
 */
import { expectHeaders, fixture, useConformanceServer } from './conformance-kit';

describe('conformance: collections', () => {
  const conformance = useConformanceServer();

  describe('collections.mpesa', () => {
    // The interface document (section 4.0) wins over the real examples' "MPESA".
    const wireBody = { ...fixture('collections/mpesa-request.json'), channel: 'MOBILE_MONEY_KE' };
    const request = {
      username: 'your_payd_username',
      amount: 10,
      phoneNumber: '0700000000',
      narration: 'Payment for goods',
      callbackUrl: 'https://your-server.com/callback',
    };

    it.each(['0700000000', '+254700000000'])(
      'sends the example body (channel MOBILE_MONEY_KE) for the phone %s',
      async (phoneNumber) => {
        conformance.server.answerWith('collections/mpesa-response.json');
        await conformance.client().collections.mpesa({ ...request, phoneNumber });

        const sent = conformance.server.onlyRequest();
        expect(sent.method).toBe('POST');
        expect(sent.url).toBe('/api/v2/payments');
        expectHeaders(sent);
        expect(sent.json).toEqual(wireBody);
      },
    );

    it('sends the caller’s idempotency key', async () => {
      conformance.server.answerWith('collections/mpesa-response.json');
      await conformance.client().collections.mpesa(request, { idempotencyKey: 'order-1' });

      expectHeaders(conformance.server.onlyRequest(), 'order-1');
    });

    it('maps the example answer to the response record', async () => {
      conformance.server.answerWith('collections/mpesa-response.json');
      const response = await conformance.client().collections.mpesa(request);

      expect(response).toEqual({
        success: true,
        message: 'Processed successfully',
        status: 'SUCCESS',
        transactionReference: '9BD103350408eR',
        trackingId: '',
        reference: '',
        result: null,
        paymentMethod: 'MOBILE_MONEY_KE',
        _raw: fixture('collections/mpesa-response.json'),
      });
    });

    it('reads a tracking id or reference sent as null, or left out, as the empty string it types', async () => {
      const { reference: _reference, ...example } = fixture('collections/mpesa-response.json');
      conformance.server.answerWithBody({ ...example, trackingId: null });
      const response = await conformance.client().collections.mpesa(request);

      expect(response).toMatchObject({ trackingId: '', reference: '' });
    });
  });

  describe('collections.card', () => {
    const wireBody = fixture('collections/card-request.json');
    const request = {
      username: 'your_payd_username',
      amount: 101,
      phoneNumber: '0700000000',
      narration: 'Payment for goods',
      callbackUrl: 'https://your-server.com/callback',
    };

    it.each(['0700000000', '+254700000000'])(
      'sends exactly the example body for the phone %s',
      async (phoneNumber) => {
        conformance.server.answerWith('collections/card-response.json');
        await conformance.client().collections.card({ ...request, phoneNumber });

        const sent = conformance.server.onlyRequest();
        expect(sent.method).toBe('POST');
        expect(sent.url).toBe('/api/v2/payments');
        expectHeaders(sent);
        expect(sent.json).toEqual(wireBody);
      },
    );

    it('maps the example answer to the response record', async () => {
      conformance.server.answerWith('collections/card-response.json');
      const response = await conformance.client().collections.card(request);

      expect(response).toEqual({
        success: true,
        message: 'Payment request sent successfully',
        status: 'SUCCESS',
        transactionReference: '9BD114038965eR',
        trackingId: '',
        reference: '',
        result: null,
        paymentMethod: 'card',
        checkoutUrl:
          'https://pay.pesapal.com/iframe/PesapalIframe3/Index?OrderTrackingId=example-tracking-id',
        _raw: fixture('collections/card-response.json'),
      });
    });
  });

  describe('collections.panAfrican', () => {
    const wireBody = fixture('collections/pan-african-request.json');
    const request = {
      username: 'your_payd_username',
      accountName: 'bank' as const,
      amount: 1800,
      phoneNumber: '+2340000000000',
      accountNumber: '0000000000',
      networkCode: '344f1324-11fb-4875-bd74-fbb43cd2b32d',
      channelId: 'af944f0c-ba70-47c7-86dc-1bad5a6ab4e4',
      redirectUrl: 'https://your-server.com/redirect',
      narration: 'Payment for goods',
      currency: 'NGN',
      callbackUrl: 'https://your-server.com/callback',
      transactionChannel: 'bank' as const,
    };

    it('sends exactly the example body', async () => {
      conformance.server.answerWith('collections/pan-african-response.json');
      await conformance.client().collections.panAfrican(request);

      const sent = conformance.server.onlyRequest();
      expect(sent.method).toBe('POST');
      expect(sent.url).toBe('/api/v3/payments');
      expectHeaders(sent);
      expect(sent.json).toEqual(wireBody);
    });

    it('leaves redirect_url out when the request has none', async () => {
      conformance.server.answerWith('collections/pan-african-response.json');
      const { redirectUrl: _redirectUrl, ...withoutRedirect } = request;
      await conformance.client().collections.panAfrican(withoutRedirect);

      const { redirect_url: _redirect, ...expected } = wireBody;
      expect(conformance.server.onlyRequest().json).toEqual(expected);
    });

    it('maps the example answer to the response record', async () => {
      conformance.server.answerWith('collections/pan-african-response.json');
      const response = await conformance.client().collections.panAfrican(request);

      expect(response).toEqual({
        success: true,
        message: 'processing',
        status: 'SUCCESS',
        transactionReference: '9BD110009989eR',
        trackingId: '',
        reference: '',
        result: null,
        paymentMethod: 'mobile',
        _raw: fixture('collections/pan-african-response.json'),
      });
    });

    it('maps the bank example answer (no message, a bank account) to the response record', async () => {
      conformance.server.answerWith('collections/pan-african-bank-response.json');
      const response = await conformance.client().collections.panAfrican(request);

      expect(response).toEqual({
        success: true,
        message: '',
        status: 'SUCCESS',
        transactionReference: '9BD110816195eR',
        trackingId: '',
        reference: '',
        result: null,
        paymentMethod: 'mobile',
        bankAccount: {
          name: 'PAGA',
          branchCode: '',
          accountNumber: '0755758717',
          accountName: 'Dummy Account Name',
          accountReference: '9BD110816195eR',
        },
        _raw: fixture('collections/pan-african-bank-response.json'),
      });
    });
  });
});
