import { Logger } from '@nestjs/common';
import type { PaymentsModuleOptions } from './payments-options.interface';
import { resolvePaymentsOptions } from './payments-options';

const CREDENTIALS = { apiUsername: 'api-user', apiPassword: 'options-spec-password' };

/** The options `changes` make resolved, and the warnings logged while resolving them. */
function resolvedWithWarnings(changes: Partial<PaymentsModuleOptions>) {
  const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  const resolved = resolvePaymentsOptions({
    ...CREDENTIALS,
    baseUrl: 'https://payments.example',
    ...changes,
  });
  return { resolved, warnings: warned.mock.calls.map(([line]) => String(line)) };
}

describe('resolvePaymentsOptions: what it says at boot', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each<[string, Partial<PaymentsModuleOptions>]>([
    ['apiPassword', { apiPassword: 'options-spec-password\n' }],
    ['apiUsername', { apiUsername: ' api-user' }],
  ])(
    'warns of whitespace around %s, without printing it, and sends it as given',
    (name, credentials) => {
      const { resolved, warnings } = resolvedWithWarnings(credentials);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`${name} begins or ends with whitespace`);
      expect(warnings[0]).not.toContain('options-spec-password');
      expect(warnings[0]).not.toContain('api-user');
      expect(resolved.apiUsername).toBe(credentials.apiUsername ?? CREDENTIALS.apiUsername);
    },
  );

  it('says nothing of credentials without whitespace around them', () => {
    expect(resolvedWithWarnings({ apiPassword: 'options spec password' }).warnings).toEqual([]);
  });

  it.each(['https://payments.example/api/v2', 'https://gateway.example/payd/api/v1/'])(
    'warns of a baseUrl that ends with an API version path (%s): each call adds its own',
    (baseUrl) => {
      expect(resolvedWithWarnings({ baseUrl }).warnings).toEqual([
        expect.stringContaining('baseUrl ends with an API version path'),
      ]);
    },
  );

  it('takes a proxy path before the API paths without a warning', () => {
    expect(resolvedWithWarnings({ baseUrl: 'https://gateway.example/payd' }).warnings).toEqual([]);
  });
});
