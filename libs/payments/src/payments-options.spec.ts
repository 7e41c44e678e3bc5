import { Logger } from '@nestjs/common';
import { resolvePaymentsOptions } from './payments-options';

describe('resolvePaymentsOptions: what it says at boot', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([
    ['apiPassword', { apiUsername: 'api-user', apiPassword: 'options-spec-password\n' }],
    ['apiUsername', { apiUsername: ' api-user', apiPassword: 'options-spec-password' }],
  ])(
    'warns of whitespace around %s, without printing it, and sends it as given',
    (name, credentials) => {
      const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const resolved = resolvePaymentsOptions({
        ...credentials,
        baseUrl: 'https://payments.example',
      });
      expect(warned).toHaveBeenCalledTimes(1);
      const [line] = warned.mock.calls[0] as [string];
      expect(line).toContain(`${name} begins or ends with whitespace`);
      expect(line).not.toContain('options-spec-password');
      expect(line).not.toContain('api-user');
      expect(resolved.apiUsername).toBe(credentials.apiUsername);
    },
  );

  it('says nothing of credentials without whitespace around them', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    resolvePaymentsOptions({
      apiUsername: 'api-user',
      apiPassword: 'options spec password',
      baseUrl: 'https://payments.example',
    });
    expect(warned).not.toHaveBeenCalled();
  });

  it.each(['https://payments.example/api/v2', 'https://gateway.example/payd/api/v1/'])(
    'warns of a baseUrl that ends with an API version path (%s): each call adds its own',
    (baseUrl) => {
      const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      resolvePaymentsOptions({
        apiUsername: 'api-user',
        apiPassword: 'options-spec-password',
        baseUrl,
      });
      expect(warned).toHaveBeenCalledWith(
        expect.stringContaining('baseUrl ends with an API version path'),
      );
    },
  );

  it('takes a proxy path before the API paths without a warning', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    resolvePaymentsOptions({
      apiUsername: 'api-user',
      apiPassword: 'options-spec-password',
      baseUrl: 'https://gateway.example/payd',
    });
    expect(warned).not.toHaveBeenCalled();
  });
});
