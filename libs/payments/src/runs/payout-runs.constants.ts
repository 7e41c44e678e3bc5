/**
 * The engine and store of a `PayoutRunsModule` registration (internal tokens, in the library's
 * `MalipoPayments:` style: docs/architecture.md).
 */
export const PAYOUT_RUN_ENGINE = 'MalipoPayments:payoutRunEngine';
export const PAYOUT_RUN_STORE = 'MalipoPayments:payoutRunStore';
export const PAYOUT_RUNS_RESOLVED_OPTIONS = 'MalipoPayments:payoutRunsResolvedOptions';
