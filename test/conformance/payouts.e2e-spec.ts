/**
 * Payouts against the real service's recorded examples (docs/wire-contract.md, "Request
 * bodies" and "Responses of the six operations").
 */
import { expectHeaders, fixture, useConformanceServer } from './conformance-kit';

describe('conformance: payouts', () => {
  const conformance = useConformanceServer();

  describe('payouts.mpesa', () => {
    // The interface document (section 4.0) wins over the real examples' "MPESA".
    const wireBody = { ...fixture('payouts/mpesa-request.json'), channel: 'MOBILE_MONEY_KE' };
    const request = {
      phoneNumber: '0700000000',
      amount: 100,
      narration: 'Withdrawal request',
      callbackUrl: 'https://your-server.com/callback',
    };

    it.each(['0700000000', '+254700000000'])(
      'sends the example body (channel MOBILE_MONEY_KE) for the phone %s',
      async (phoneNumber) => {
        conformance.server.answerWith('payouts/mpesa-response.json');
        await conformance.client().payouts.mpesa({ ...request, phoneNumber });

        const sent = conformance.server.onlyRequest();
        expect(sent.method).toBe('POST');
        expect(sent.url).toBe('/api/v2/withdrawal');
        expectHeaders(sent);
        expect(sent.json).toEqual(wireBody);
      },
    );

    it('sends wallet_type only for the USD wallet', async () => {
      conformance.server.answerWith('payouts/mpesa-response.json');
      await conformance.client().payouts.mpesa({ ...request, walletType: 'local' });
      await conformance.client().payouts.mpesa({ ...request, walletType: 'USD' });
      await conformance.client({ walletType: 'USD' }).payouts.mpesa(request);

      expect(conformance.server.requests.map((sent) => sent.json)).toEqual([
        wireBody,
        { ...wireBody, wallet_type: 'USD' },
        { ...wireBody, wallet_type: 'USD' },
      ]);
    });

    it('maps the example answer to the response record', async () => {
      conformance.server.answerWith('payouts/mpesa-response.json');
      const response = await conformance.client().payouts.mpesa(request);

      expect(response).toEqual({
        success: true,
        message: 'Transaction request sent successfully',
        status: 'SUCCESS',
        transactionReference: '9BD141203407eW',
        channel: 'MOBILE_MONEY_KE',
        amount: 100,
        _raw: fixture('payouts/mpesa-response.json'),
      });
    });
  });

  describe('payouts.panAfrican', () => {
    const wireBody = fixture('payouts/pan-african-request.json');
    const request = {
      username: 'your_payd_username',
      networkCode: '344f1324-11fb-4875-bd74-fbb43cd2b32d',
      accountName: 'bank' as const,
      accountHolderName: 'John Doe',
      accountNumber: '0000000000',
      amount: 1800,
      phoneNumber: '+2340000000000',
      channelId: 'fe8f4989-3bf6-41ca-9621-ffe2bc127569',
      narration: 'Payment for goods',
      currency: 'NGN',
      callbackUrl: 'https://your-server.com/callback',
      transactionChannel: 'bank' as const,
      providerName: 'OPay',
      providerCode: '100004',
    };

    it('sends exactly the example body', async () => {
      conformance.server.answerWith('payouts/pan-african-response.json');
      await conformance.client().payouts.panAfrican(request);

      const sent = conformance.server.onlyRequest();
      expect(sent.method).toBe('POST');
      expect(sent.url).toBe('/api/v2/payments');
      expectHeaders(sent);
      expect(sent.json).toEqual(wireBody);
    });

    it('sends wallet_type only for the USD wallet', async () => {
      conformance.server.answerWith('payouts/pan-african-response.json');
      await conformance.client().payouts.panAfrican({ ...request, walletType: 'local' });
      await conformance.client().payouts.panAfrican({ ...request, walletType: 'USD' });

      expect(conformance.server.requests.map((sent) => sent.json)).toEqual([
        wireBody,
        { ...wireBody, wallet_type: 'USD' },
      ]);
    });

    it('maps the example answer to the response record', async () => {
      conformance.server.answerWith('payouts/pan-african-response.json');
      const response = await conformance.client().payouts.panAfrican(request);

      expect(response).toEqual({
        success: true,
        message: 'Transaction request sent successfully',
        status: 'SUCCESS',
        transactionReference: '9BD090722409eW',
        channel: '',
        amount: 1800,
        _raw: fixture('payouts/pan-african-response.json'),
      });
    });
  });

  describe('payouts.merchant', () => {
    const wireBody = fixture('payouts/merchant-request.json');
    const request = {
      username: 'your_payd_username',
      amount: 12,
      phoneNumber: '+254700000000',
      narration: 'Payment for goods',
      businessAccount: '123456',
      businessNumber: '9876543210',
      callbackUrl: 'https://your-server.com/callback',
    };

    it('sends exactly the example body, the phone +254… as given', async () => {
      conformance.server.answerWith('payouts/merchant-response.json');
      await conformance.client().payouts.merchant(request);

      const sent = conformance.server.onlyRequest();
      expect(sent.method).toBe('POST');
      expect(sent.url).toBe('/api/v3/withdrawal');
      expectHeaders(sent);
      expect(sent.json).toEqual(wireBody);
    });

    it('sends wallet_type only for the USD wallet', async () => {
      conformance.server.answerWith('payouts/merchant-response.json');
      await conformance.client().payouts.merchant({ ...request, walletType: 'local' });
      await conformance.client().payouts.merchant({ ...request, walletType: 'USD' });

      expect(conformance.server.requests.map((sent) => sent.json)).toEqual([
        wireBody,
        { ...wireBody, wallet_type: 'USD' },
      ]);
    });

    it('maps the example answer to the response record', async () => {
      conformance.server.answerWith('payouts/merchant-response.json');
      const response = await conformance.client().payouts.merchant(request);

      expect(response).toEqual({
        success: true,
        message: 'Transaction request sent successfully',
        status: 'SUCCESS',
        transactionReference: '9BD090722409eW',
        channel: '',
        amount: 12,
        _raw: fixture('payouts/merchant-response.json'),
      });
    });
  });
});
