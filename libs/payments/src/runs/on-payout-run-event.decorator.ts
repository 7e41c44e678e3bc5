import { SetMetadata } from '@nestjs/common';
import { PAYOUT_RUN_EVENT_HANDLER } from '../payments.constants';
import { PAYOUT_RUN_EVENTS } from './payout-run-events';
import type { PayoutRunEventName } from './payout-run-events';

/**
 * Marks a provider method as a handler of payout-run events: `@OnPayoutRunEvent('item.settled')`,
 * several names, or none for every event. The method receives a {@link PayoutRunEvent}.
 *
 * Handlers run one event after another, in the order the events happened, apart from the run: a
 * slow handler does not slow the payouts, and one that throws is logged and does not stop them.
 * Events live in this process: after a restart, read the run (or the journal) instead.
 */
export const OnPayoutRunEvent = (...events: PayoutRunEventName[]) =>
  SetMetadata(PAYOUT_RUN_EVENT_HANDLER, events.length > 0 ? events : [...PAYOUT_RUN_EVENTS]);
