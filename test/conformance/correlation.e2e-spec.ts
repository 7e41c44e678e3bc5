/**
 * `malipo_key` on `callback_url` with the default `correlateCallbacks` (docs/wire-contract.md,
 * "Ambiguous failures (ours)").
 */
import { EXAMPLE_CALLS, expectedWireBody, useConformanceServer, UUID_V4 } from './conformance-kit';

const CALLBACK_URL = 'https://your-server.com/callback';

describe('conformance: callback correlation (malipo_key)', () => {
  const conformance = useConformanceServer();
  const withCallback = EXAMPLE_CALLS.filter((example) => example.hasCallback);

  describe.each(withCallback)('$operation', ({ requestExample, responseExample, call }) => {
    const wireBody = expectedWireBody(requestExample ?? '');

    it('appends the generated idempotency key to the example callback URL', async () => {
      conformance.server.answerWith(responseExample);
      // `undefined`: the library's default (true), not the kit's false.
      await call(conformance.client({ correlateCallbacks: undefined }), CALLBACK_URL);

      const sent = conformance.server.onlyRequest();
      const key = sent.headers['idempotency-key'];
      expect(key).toMatch(UUID_V4);
      expect(sent.json).toEqual({
        ...wireBody,
        callback_url: `${CALLBACK_URL}?malipo_key=${String(key)}`,
      });
    });

    it('appends the caller’s idempotency key and keeps the URL’s own query', async () => {
      conformance.server.answerWith(responseExample);
      await call(conformance.client({ correlateCallbacks: true }), `${CALLBACK_URL}?order=7`, {
        idempotencyKey: 'order-7',
      });

      const sent = conformance.server.onlyRequest();
      expect(sent.headers['idempotency-key']).toBe('order-7');
      expect(sent.json).toEqual({
        ...wireBody,
        callback_url: `${CALLBACK_URL}?order=7&malipo_key=order-7`,
      });
    });

    it('sends the callback URL as given with correlateCallbacks: false', async () => {
      conformance.server.answerWith(responseExample);
      await call(conformance.client({ correlateCallbacks: false }), CALLBACK_URL);

      expect(conformance.server.onlyRequest().json).toEqual(wireBody);
    });
  });
});
