import type { Region } from './sandbox-operations';

/**
 * How a test steers the automatic outcome of a transaction (documented in the README). The first
 * matching row wins; no match means success. Checkout transactions are decided on the hosted page.
 * The outcome carries the webhook's `result_code` and `remarks`, in the real service's style.
 */
export interface Outcome {
  status: 'success' | 'failed';
  resultCode: number;
  remarks: string;
}

interface OutcomeInput {
  operation: string;
  region: Region;
  amount: number;
  phoneNumber: string;
}

/**
 * Kenyan failures: result_code 1 and M-Pesa's words; pan-African failures: result_code 3000 and
 * remarks starting with "other", as the real ones.
 */
export function failure(region: Region, reasons: { kenya: string; panAfrican: string }): Outcome {
  return region === 'panAfrican'
    ? { status: 'failed', resultCode: 3000, remarks: `other: ${reasons.panAfrican}` }
    : {
        status: 'failed',
        resultCode: 1,
        remarks: `Transaction failed with message: [${reasons.kenya}]`,
      };
}

/** The success remarks of each operation (the real M-Pesa one keeps its spelling). */
export function success(tx: { operation: string; region: Region }): Outcome {
  const remarks: Record<string, string> = {
    'collections.mpesa': 'Successfully processes m-pesa transaction',
    'collections.card': 'Successfully processed card payment',
    'payouts.mpesa': 'Successfully processed m-pesa withdrawal',
    'payouts.merchant': 'Successfully processed merchant payment',
    'transfers.send': 'Transfer completed',
  };
  return {
    status: 'success',
    resultCode: 0,
    remarks: tx.region === 'panAfrican' ? 'complete' : (remarks[tx.operation] ?? 'complete'),
  };
}

const STEERED_OUTCOMES: readonly {
  when: (tx: OutcomeInput) => boolean;
  outcome: (tx: OutcomeInput) => Outcome;
}[] = [
  {
    when: (tx) => tx.phoneNumber.replace(/\D/g, '').endsWith('0000'),
    outcome: (tx) =>
      failure(tx.region, {
        kenya: 'DS timeout user cannot be reached',
        panAfrican: 'account unreachable',
      }),
  },
  {
    when: (tx) => tx.amount === 666,
    outcome: (tx) =>
      failure(tx.region, { kenya: 'Request Cancelled by user.', panAfrican: 'declined' }),
  },
];

export function decideOutcome(tx: OutcomeInput): Outcome {
  const steered = STEERED_OUTCOMES.find((row) => row.when(tx));
  return steered ? steered.outcome(tx) : success(tx);
}

/** The narration that makes the service refuse a valid request with HTTP 200 and success false. */
export const REJECT_NARRATION = 'REJECT';
