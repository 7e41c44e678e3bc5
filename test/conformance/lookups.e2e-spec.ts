/**
 * Network discovery, transaction status and balances against the real service's recorded
 * examples (docs/wire-contract.md, "Look-ups and transfer").
 */
import {
  findNetwork,
  PaymentsValidationError,
  ServiceAPIError,
  toNetworkRequestFields,
} from '@malipo/nestjs';
import { expectHeaders, fixture, rejectionOf, useConformanceServer } from './conformance-kit';

describe('conformance: look-ups', () => {
  const conformance = useConformanceServer();

  describe('networks.discover', () => {
    const mobileMoney = {
      id: 'aaaaaaaa-bbbb-4ccc-dddd-eeeeeeeeeeee',
      code: 'Mobile Money',
      updatedAt: '0001-01-01T00:00:00Z',
      status: 'active',
      accountNumberType: 'phone',
      country: 'UG',
      name: 'Mobile Money',
      channelIds: ['11111111-2222-4333-4444-555555555555', '66666666-7777-4888-9999-aaaaaaaaaaaa'],
      selectedChannelId: '66666666-7777-4888-9999-aaaaaaaaaaaa',
      countryAccountNumberType: 'UGPHONE',
      minAmount: 15000,
      maxAmount: 3000000,
    };
    const manualInput = {
      id: 'bbbbbbbb-cccc-4ddd-eeee-ffffffffffff',
      code: '',
      updatedAt: '0001-01-01T00:00:00Z',
      status: 'active',
      accountNumberType: 'bank',
      country: 'ALL',
      name: 'Manual Input',
      channelIds: ['cccccccc-dddd-4eee-ffff-111111111111', 'dddddddd-eeee-4fff-0000-222222222222'],
      selectedChannelId: 'eeeeeeee-ffff-4000-1111-333333333333',
      countryAccountNumberType: 'ALLBANK',
      minAmount: 15000,
      maxAmount: 36000000,
    };

    it.each(['receipt', 'withdrawal'] as const)(
      'asks GET /v2/networks/grouped for %s with the dial code in the query',
      async (transactionType) => {
        conformance.server.answerWith('networks/discovery-response.json');
        await conformance.client().networks.discover(transactionType, '+234');

        const sent = conformance.server.onlyRequest();
        expect(sent.method).toBe('GET');
        expect(sent.url).toBe(
          `/v2/networks/grouped?transaction_type=${transactionType}&dial_code=%2B234`,
        );
        expectHeaders(sent);
      },
    );

    it('maps the example answer to camelCase networks', async () => {
      conformance.server.answerWith('networks/discovery-response.json');
      const discovery = await conformance.client().networks.discover('receipt', '+234');

      expect(discovery).toEqual({
        defaults: [],
        mobile: [mobileMoney],
        banks: [manualInput],
        _raw: fixture('networks/discovery-response.json'),
      });
    });

    it('reads a group the service sends as null (a Go empty slice) as empty, never a crash', async () => {
      const example = fixture('networks/discovery-response.json');
      const answer = { ...example, banks: null, mobile: null, defaults: null };
      conformance.server.answerWithBody(answer);
      const discovery = await conformance.client().networks.discover('receipt', '+234');

      expect(discovery).toMatchObject({ defaults: [], mobile: [], banks: [] });
      // findNetwork says there is none on offer, as a typed error, not a TypeError.
      for (const group of ['all', 'banks', 'mobile'] as const) {
        expect(() => findNetwork(discovery, 'Mobile Money', group)).toThrow(
          PaymentsValidationError,
        );
      }
    });

    it('gives the request fields of a network found by name', async () => {
      conformance.server.answerWith('networks/discovery-response.json');
      const discovery = await conformance.client().networks.discover('withdrawal', '+234');

      const network = findNetwork(discovery, 'mobile money', 'mobile');
      expect(network).toEqual(mobileMoney);
      expect(toNetworkRequestFields(network)).toEqual({
        networkCode: 'aaaaaaaa-bbbb-4ccc-dddd-eeeeeeeeeeee',
        channelId: '66666666-7777-4888-9999-aaaaaaaaaaaa',
        transactionChannel: 'phone',
        providerName: 'Mobile Money',
        providerCode: 'Mobile Money',
      });
      expect(toNetworkRequestFields(findNetwork(discovery, 'Manual Input', 'banks'))).toEqual({
        networkCode: 'bbbbbbbb-cccc-4ddd-eeee-ffffffffffff',
        channelId: 'eeeeeeee-ffff-4000-1111-333333333333',
        transactionChannel: 'bank',
        providerName: 'Manual Input',
        providerCode: '',
      });
      expect(() => findNetwork(discovery, 'No Such Network')).toThrow(PaymentsValidationError);
      expect(() => findNetwork(discovery, 'Manual Input', 'mobile')).toThrow(
        PaymentsValidationError,
      );
    });

    it.each(['234', '+12345'])('refuses the dial code %s before sending', async (dialCode) => {
      const error = await rejectionOf(conformance.client().networks.discover('receipt', dialCode));

      expect(error).toBeInstanceOf(PaymentsValidationError);
      expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain('dialCode');
      expect(conformance.server.requests).toHaveLength(0);
    });
  });

  describe('transactions.status', () => {
    it('asks GET /api/v1/status/{reference}', async () => {
      conformance.server.answerWith('transactions/status-response.json');
      await conformance.client().transactions.status('9BD103350408eR');

      const sent = conformance.server.onlyRequest();
      expect(sent.method).toBe('GET');
      expect(sent.url).toBe('/api/v1/status/9BD103350408eR');
      expectHeaders(sent);
    });

    it('allows a reference with a single dot, URL-encoded', async () => {
      // The recorded answer is the record of 9BD103350408eR: refused as another transaction's.
      conformance.server.answerWith('transactions/status-response.json');
      await expect(
        conformance.client().transactions.status('9BD12041887.eS'),
      ).rejects.toMatchObject({ code: 'INVALID_RESPONSE', mayHaveExecuted: false });

      expect(conformance.server.onlyRequest().url).toBe(
        `/api/v1/status/${encodeURIComponent('9BD12041887.eS')}`,
      );
    });

    it('maps the example answer to a camelCase record', async () => {
      conformance.server.answerWith('transactions/status-response.json');
      const status = await conformance.client().transactions.status('9BD103350408eR');

      expect(status).toEqual({
        id: '00000000-0000-4000-a000-000000000001',
        accountId: '',
        billingCurrency: '',
        currency: 'KES',
        code: '9BD103350408eR',
        conversionRate: 0,
        amount: 10000,
        billingCurrencyAmount: 0,
        balance: 50000,
        type: 'receipt',
        transactionDetails: {
          payer: '+254700000000',
          merchantId: '9BD103350408eR:UBC7G6FFA3',
          phoneNumber: '+254700000000',
          processedAt: { seconds: 1770888820, nanos: 350838138 },
          reason: 'Successfully processes m-pesa transaction',
          channel: 'mobile',
          accountNumber: '00000000-0000-4000-a000-000000000002',
          status: 'success',
          receiver: 'Your Business Name',
          emailAddress: 'you@example.com',
        },
        transactionCategory: 'fiat',
        userId: '',
        requestMetadata: null,
        createdAt: '2026-02-12T09:33:40.360254Z',
        _raw: fixture('transactions/status-response.json'),
      });
    });
  });

  describe('balances.all', () => {
    const local = { balance: 1000, convertedBalance: 1000, currency: 'KES' };
    const usd = { balance: 500, convertedBalance: 500, currency: 'USD' };

    it('asks GET /api/v1/accounts/{username}/all_balances', async () => {
      conformance.server.answerWith('balances/response.json');
      await conformance.client().balances.all('your_payd_username');

      const sent = conformance.server.onlyRequest();
      expect(sent.method).toBe('GET');
      expect(sent.url).toBe('/api/v1/accounts/your_payd_username/all_balances');
      expectHeaders(sent);
    });

    it('falls back to the option defaultUsername', async () => {
      conformance.server.answerWith('balances/response.json');
      await conformance.client({ defaultUsername: 'your_payd_username' }).balances.all();

      expect(conformance.server.onlyRequest().url).toBe(
        '/api/v1/accounts/your_payd_username/all_balances',
      );
    });

    it('refuses to send without a username or defaultUsername', async () => {
      const error = await rejectionOf(conformance.client().balances.all());

      expect(error).toBeInstanceOf(PaymentsValidationError);
      expect((error as PaymentsValidationError).errors.map((e) => e.field)).toEqual(['username']);
      expect(conformance.server.requests).toHaveLength(0);
    });

    // A wallet read as undefined would pass any balance check: no amount exceeds `undefined`.
    it.each([
      ['no wallets at all', {}, 'fiat_balance.balance'],
      [
        'a USD wallet without its balance',
        { onchain_balance: { currency: 'USD' } },
        'onchain_balance.balance',
      ],
      [
        'a USD wallet with a null currency',
        { onchain_balance: { balance: 1, currency: null } },
        'onchain_balance.currency',
      ],
      [
        'a wallet without its balance',
        { fiat_balance: { currency: 'KES' } },
        'fiat_balance.balance',
      ],
      [
        'a null balance',
        { fiat_balance: { balance: null, currency: 'KES' } },
        'fiat_balance.balance',
      ],
    ])('refuses an answer with %s as MISSING_FIELD, naming it', async (_label, change, named) => {
      const example = fixture('balances/response.json');
      const answer = Object.keys(change).length === 0 ? {} : { ...example, ...change };
      conformance.server.answerWithBody(answer);
      const error = await rejectionOf(conformance.client().balances.all('your_payd_username'));

      expect(error).toBeInstanceOf(ServiceAPIError);
      expect(error).toMatchObject({ code: 'MISSING_FIELD' });
      expect((error as Error).message).toContain(named);
    });

    // An account without a USD wallet: its absence is said (undefined or null), never made up.
    it.each([
      ['left out', undefined],
      ['null', null],
    ])('reads a USD wallet %s as such, the local wallet whole', async (_label, wallet) => {
      const { onchain_balance: _usd, ...example } = fixture('balances/response.json');
      conformance.server.answerWithBody(
        wallet === undefined ? example : { ...example, onchain_balance: wallet },
      );
      const balances = await conformance.client().balances.all('your_payd_username');

      expect(balances.local).toEqual(local);
      expect(balances.usd).toBe(wallet);
      expect(balances.onchainBalance).toBe(wallet);
    });

    it('maps the example answer to both wallets and their aliases', async () => {
      conformance.server.answerWith('balances/response.json');
      const balances = await conformance.client().balances.all('your_payd_username');

      expect(balances).toEqual({
        fiatBalance: local,
        onchainBalance: usd,
        local,
        usd,
        _raw: fixture('balances/response.json'),
      });
    });
  });

  describe('path parameters', () => {
    const traversals = ['../accounts/x', 'a/b', 'x?y', '#', '..'];

    it.each(traversals)('refuses the reference %p and sends nothing', async (reference) => {
      const error = await rejectionOf(conformance.client().transactions.status(reference));

      expect(error).toBeInstanceOf(PaymentsValidationError);
      expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain('reference');
      expect(conformance.server.requests).toHaveLength(0);
    });

    it.each(traversals)('refuses the username %p and sends nothing', async (username) => {
      const error = await rejectionOf(conformance.client().balances.all(username));

      expect(error).toBeInstanceOf(PaymentsValidationError);
      expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain('username');
      expect(conformance.server.requests).toHaveLength(0);
    });
  });
});
