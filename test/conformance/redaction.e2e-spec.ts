/**
 * `_raw` is "the whole parsed body (credentials redacted), unmodified otherwise"
 * (docs/wire-contract.md, "Responses of the six operations"). The other specs use the API
 * password `p`, which occurs in most recorded answers (`payment_method`, `phone`, `https://pay…`):
 * these tests tell an altered answer from a wrong mapping.
 */
import { EXAMPLE_CALLS, fixture, useConformanceServer } from './conformance-kit';

/** A password that occurs in none of the recorded examples. */
const UNSEEN_PASSWORD = 'S3cret-Zz';

describe('conformance: credentials redaction', () => {
  const conformance = useConformanceServer();

  it.each(EXAMPLE_CALLS)(
    '$operation keeps the example answer whole when the password is not in it',
    async ({ responseExample, call }) => {
      conformance.server.answerWith(responseExample);
      const response = await call(conformance.client({ apiPassword: UNSEEN_PASSWORD }));

      expect(response).toHaveProperty('_raw', fixture(responseExample));
    },
  );

  it('does not alter the keys and values of an answer in which a one-character password occurs', async () => {
    conformance.server.answerWith('collections/card-response.json');
    const card = EXAMPLE_CALLS.find((example) => example.operation === 'collections.card');
    const response = await card?.call(conformance.client({ apiPassword: 'p' }));

    const example = fixture('collections/card-response.json');
    expect(response).toHaveProperty('checkoutUrl', example.checkout_url);
    expect(response).toHaveProperty('_raw', example);
  });
});
