/**
 * How a test steers the automatic outcome of a transaction (documented in the README). The first
 * matching row wins; no match means SUCCESS. Checkout transactions are decided on the hosted page.
 */
export interface Outcome {
  status: 'SUCCESS' | 'FAILED';
  message: string;
}

interface OutcomeInput {
  kind: 'collection' | 'payout';
  amount: number;
  phoneNumber: string;
}

const STEERED_OUTCOMES: readonly {
  when: (tx: OutcomeInput) => boolean;
  outcome: (tx: OutcomeInput) => Outcome;
}[] = [
  {
    when: (tx) => tx.phoneNumber.replace(/\D/g, '').endsWith('0000'),
    outcome: (tx) => ({
      status: 'FAILED',
      message: tx.kind === 'collection' ? 'Customer unreachable' : 'Recipient unreachable',
    }),
  },
  {
    when: (tx) => tx.amount === 666,
    outcome: () => ({ status: 'FAILED', message: 'Declined' }),
  },
];

export function decideOutcome(tx: OutcomeInput): Outcome {
  const steered = STEERED_OUTCOMES.find((row) => row.when(tx));
  if (steered) return steered.outcome(tx);
  return {
    status: 'SUCCESS',
    message: tx.kind === 'collection' ? 'Payment completed' : 'Payout completed',
  };
}
