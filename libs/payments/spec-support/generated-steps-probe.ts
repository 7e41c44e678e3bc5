/**
 * Runs every operation case through preparation, encoding and decoding, and prints what they
 * gave as JSON, with whether this process could generate code. generated-function.spec.ts runs
 * it under `--disallow-code-generation-from-strings` and compares it with its own results.
 */
import { generateFunction } from '../src/generated-function';
import { OPERATIONS } from '../src/operations';
import type { PaymentsDefaults } from '../src/payments-options.interface';
import { prepareRequest } from '../src/request-rules';
import { decodeResponse, encodeRequest } from '../src/wire';
import { OPERATION_CASES, successBody } from './operation-cases';

const DEFAULTS: PaymentsDefaults = {
  username: 'fallback-user',
  callbackUrl: undefined,
  walletType: 'local',
};

function attempt(step: () => unknown): unknown {
  try {
    return { value: step() };
  } catch (error: unknown) {
    return { error: error instanceof Error ? { ...error, message: error.message } : error };
  }
}

export function probeGeneratedSteps(): unknown {
  const operations = Object.values(OPERATIONS) as Parameters<typeof prepareRequest>[0][];
  return {
    canGenerate: generateFunction('probe', {}, [], 'return 1;') !== undefined,
    cases: OPERATION_CASES.map((testCase) => {
      const operation = operations.find((row) => row.name === testCase.operation);
      if (!operation) throw new Error(`no operation ${testCase.operation}`);
      const context = { idempotencyKey: 'key-1', correlate: true };
      const prepared = attempt(() => prepareRequest(operation, testCase.request, DEFAULTS));
      return {
        prepared,
        refused: attempt(() =>
          prepareRequest(operation, { ...testCase.request, amount: -1, x: 1 }, DEFAULTS),
        ),
        encoded: attempt(() =>
          encodeRequest(operation, prepareRequest(operation, testCase.request, DEFAULTS), context),
        ),
        decoded: attempt(() =>
          decodeResponse(successBody(testCase.kind), operation.response, testCase.request),
        ),
        decodedEmpty: attempt(() => decodeResponse({}, operation.response, testCase.request)),
      };
    }),
  };
}

if (require.main === module) process.stdout.write(JSON.stringify(probeGeneratedSteps()));
