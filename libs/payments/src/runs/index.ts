/**
 * `@malipo/nestjs/runs`: payout runs, many payouts sent as one (docs/payout-runs.md). A subpath of
 * its own so that an app that makes single calls never loads `@nestjs/core`'s discovery or this
 * code.
 */
export { PayoutRunsModule } from './payout-runs.module';
export type {
  PayoutRunsModuleAsyncOptions,
  PayoutRunsModuleExtras,
  PayoutRunsModuleForRootOptions,
  PayoutRunsOptionsFactory,
} from './payout-runs.module-definition';
export type { PayoutRunsModuleOptions } from './payout-runs.options';
export { PAYOUT_RUNS_OPTIONS } from '../payments.constants';
export { PayoutRunsService } from './payout-runs.service';
export { OnPayoutRunEvent } from './on-payout-run-event.decorator';
export { PAYOUT_RUN_EVENTS } from './payout-run-events';
export type {
  PayoutRunCompletedEvent,
  PayoutRunEvent,
  PayoutRunEventName,
  PayoutRunItemSettledEvent,
  PayoutRunProgressEvent,
} from './payout-run-events';
export { PAYOUT_RUN_ITEM_STATES } from './payout-run.interfaces';
export type {
  CreatedPayoutRun,
  CreatePayoutRunOptions,
  PayoutRun,
  PayoutRunBalanceCheck,
  PayoutRunBalanceShortfall,
  PayoutRunItem,
  PayoutRunItemBase,
  PayoutRunItemInput,
  PayoutRunItemProblem,
  PayoutRunItemsPage,
  PayoutRunItemsQuery,
  PayoutRunItemState,
  PayoutRunOperation,
  PayoutRunReport,
  PayoutRunState,
  PayoutRunTotal,
  PayoutRunTotals,
  PayoutRunValidationReport,
} from './payout-run.interfaces';
export {
  PayoutRunConflictError,
  PayoutRunCreationError,
  PayoutRunNotFoundError,
  PayoutRunRefusedError,
  PayoutRunStateError,
  PayoutRunStoreError,
} from './payout-run.errors';
export type { PayoutRunStoreAction } from './payout-run.errors';
export { PayoutRunsExceptionFilter } from './payout-runs-exception.filter';
export type { PayoutRunError, PayoutRunErrorResponse } from './payout-runs-exception.filter';
export { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
export type { InMemoryPayoutRunStoreOptions } from './in-memory-payout-run.store';
export { PayoutRunExistsError } from './payout-run.store';
export type {
  PayoutRunChange,
  PayoutRunCondition,
  PayoutRunItemChange,
  PayoutRunItemRecord,
  PayoutRunRecord,
  PayoutRunStore,
  PayoutRunSummary,
} from './payout-run.store';
export type {
  PayoutRunEngine,
  PayoutRunEngineContext,
  PayoutRunEngineFactory,
} from './payout-run-engine';
// What an engine is handed (PayoutRunEngineContext): types only, the module makes them.
export type { PayoutRunsPayments } from './payout-runs-payments';
export type { PayoutRunOutageGuard } from './payout-run-outage-guard';
export type { PayoutRunStatusLookups } from './payout-run-status-lookups';
export { payoutRunItemKey } from './payout-run-validation';
