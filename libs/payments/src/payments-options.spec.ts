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
});
