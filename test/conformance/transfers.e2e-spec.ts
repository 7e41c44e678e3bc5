/**
 * Transfer between accounts against the real service's recorded examples (docs/wire-contract.md,
 * "Look-ups and transfer").
 */
import { expectHeaders, fixture, useConformanceServer } from './conformance-kit';

describe('conformance: transfers.send', () => {
  const conformance = useConformanceServer();
  const wireBody = fixture('transfers/request.json');
  const request = {
    receiverUsername: 'recipient_username',
    amount: 10,
    narration: 'Family breakfast',
    phoneNumber: '+254700000000',
  };

  it('sends exactly the example body to POST /api/v2/p2p', async () => {
    conformance.server.answerWith('transfers/response.json');
    await conformance.client().transfers.send(request, { idempotencyKey: 'transfer-1' });

    const sent = conformance.server.onlyRequest();
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/api/v2/p2p');
    expectHeaders(sent, 'transfer-1');
    expect(sent.json).toEqual(wireBody);
  });

  it('sends currency when given and wallet_type only for the USD wallet', async () => {
    conformance.server.answerWith('transfers/response.json');
    await conformance.client().transfers.send({ ...request, currency: 'KES', walletType: 'local' });
    await conformance.client().transfers.send({ ...request, walletType: 'USD' });

    expect(conformance.server.requests.map((sent) => sent.json)).toEqual([
      { ...wireBody, currency: 'KES' },
      { ...wireBody, wallet_type: 'USD' },
    ]);
  });

  it('maps the example answer to the response record', async () => {
    conformance.server.answerWith('transfers/response.json');
    const response = await conformance.client().transfers.send(request);

    expect(response).toEqual({
      success: true,
      message: 'Transaction request sent successfully',
      // The real answer has no `status`; every response carries one (section 2.3).
      status: '',
      transactionReference: '9BD12041887.eS',
      trackingId: '',
      reference: '',
      result: null,
      _raw: fixture('transfers/response.json'),
    });
  });
});
