import {
  verifyPaymentsSignature,
  type PaymentsSignatureOptions,
} from './payments-webhook.signature';

// Deliveries through a real app are in payments-webhook.module.spec.ts ("signed deliveries"):
// these are the options, checked when the hook is made, before any delivery.
describe('verifyPaymentsSignature options', () => {
  const KEPT = 'a-secret-that-must-not-leak';

  it.each<[string, unknown, RegExp]>([
    ['no options', undefined, /options \{ secrets \} are required/],
    ['no secrets', {}, /secrets must be a non-empty string or a non-empty array/],
    ['an empty list', { secrets: [] }, /secrets must be a non-empty string or a non-empty array/],
    ['an empty secret', { secrets: '' }, /the secret is empty/],
    ['a blank secret', { secrets: '   ' }, /the secret is empty/],
    ['an empty secret in a rotation', { secrets: [KEPT, ''] }, /secret 2 of 2 is empty/],
    ['a secret that is not a string', { secrets: [KEPT, 42] }, /secret 2 of 2 is not a string/],
    ['a header with a space', { secrets: KEPT, header: 'x payd' }, /header must be an HTTP/],
    ['an empty header', { secrets: KEPT, header: '' }, /header must be an HTTP header name/],
    ['an unknown signedBody', { secrets: KEPT, signedBody: 'json' }, /signedBody must be/],
  ])('throws for %s, naming no secret', (_label, options, message) => {
    let thrown: unknown;
    try {
      verifyPaymentsSignature(options as PaymentsSignatureOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).toMatch(/^verifyPaymentsSignature: /);
    expect((thrown as Error).message).not.toContain(KEPT);
  });

  it('accepts one secret, a rotation, a header in any case and both signedBody values', () => {
    expect(typeof verifyPaymentsSignature({ secrets: KEPT })).toBe('function');
    expect(
      typeof verifyPaymentsSignature({
        secrets: [KEPT, 'next'],
        header: 'X-Shop-Signature',
        signedBody: 'raw',
      }),
    ).toBe('function');
    expect(typeof verifyPaymentsSignature({ secrets: KEPT, signedBody: 'sorted-keys' })).toBe(
      'function',
    );
  });
});
