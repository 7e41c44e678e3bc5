import type {
  MerchantPayoutRequest,
  MpesaPayoutRequest,
  PanAfricanPayoutRequest,
} from '../dto/payout-requests';
import type { PayoutResponse } from '../dto/responses';
import type { PaymentsOperation } from '../operations';
import { OPERATIONS } from '../operations';
import type { PaymentsCallOptions, WalletType } from '../payments-options.interface';
import type { PayoutsService } from '../payouts.service';
import type { PayoutRunOperation } from './payout-run.interfaces';
import { nationalNumber } from '../phone-numbers';

/** What a run needs to know of one kind of payout: the rest is the library's. */
export interface PayoutRunKind {
  /** Its row of operations.ts: request class and fields, as `prepareRequest` validates them. */
  readonly operation: PaymentsOperation<object, unknown>;
  /** Sends it through `PayoutsService`, so the journal, retries and redaction are the library's. */
  readonly send: (
    payouts: PayoutsService,
    request: object,
    options: PaymentsCallOptions,
  ) => Promise<PayoutResponse>;
  /** Who receives it, for the duplicate check: two items to one receiver look alike here. */
  readonly receiver: (request: object) => string;
  /** The currency of its `amount`. */
  readonly currency: (request: object) => string;
  /** The wallet it is drawn from, after the client default was applied. */
  readonly wallet: (request: object) => WalletType;
}

/**
 * An account as the duplicate check compares it: `ACC-1`, `acc-1` and `ACC -1` are one receiver
 * here. Billers may read them as different accounts; a false alarm costs an `allowDuplicate`, a
 * miss a second payment (docs/payout-runs.md).
 */
const sameAccount = (account: unknown): string =>
  typeof account === 'string' ? account.replace(/\s+/g, '').toLowerCase() : String(account);

/**
 * A mobile wallet by its national number, whichever payout reaches it: an M-Pesa payout to
 * `0722000111` and a pan-African one to `+254722000111` on the M-Pesa network pay one person (the
 * currency, in the duplicate check beside it, tells countries apart).
 */
const wallet = (national: string): string => `wallet:${national}`;

const walletOf = (request: object): WalletType =>
  (request as { walletType?: WalletType }).walletType ?? 'local';

/** The three payouts; each differs from the others only by this data. */
export const PAYOUT_RUN_KINDS: Readonly<Record<PayoutRunOperation, PayoutRunKind>> = {
  'payouts.mpesa': {
    operation: OPERATIONS.payoutsMpesa as PaymentsOperation<object, unknown>,
    send: (payouts, request, options) => payouts.mpesa(request as MpesaPayoutRequest, options),
    receiver: (request) => {
      // `0712345678` and `+254712345678` are one M-Pesa number.
      const { phoneNumber } = request as MpesaPayoutRequest;
      return wallet(nationalNumber(phoneNumber) ?? phoneNumber);
    },
    currency: () => 'KES',
    wallet: walletOf,
  },
  'payouts.panAfrican': {
    operation: OPERATIONS.payoutsPanAfrican as PaymentsOperation<object, unknown>,
    send: (payouts, request, options) =>
      payouts.panAfrican(request as PanAfricanPayoutRequest, options),
    receiver: (request) => {
      const { networkCode, accountNumber, accountName, transactionChannel } =
        request as PanAfricanPayoutRequest;
      // A wallet's number may be written as a phone number is (`+234803…`, `0803…`).
      const phone = nationalNumber(accountNumber);
      if (phone !== undefined && (accountName === 'phone' || transactionChannel === 'phone')) {
        return wallet(phone);
      }
      return `panAfrican:${sameAccount(networkCode)}:${phone ?? sameAccount(accountNumber)}`;
    },
    currency: (request) => (request as PanAfricanPayoutRequest).currency,
    wallet: walletOf,
  },
  'payouts.merchant': {
    operation: OPERATIONS.payoutsMerchant as PaymentsOperation<object, unknown>,
    send: (payouts, request, options) =>
      payouts.merchant(request as MerchantPayoutRequest, options),
    receiver: (request) => {
      const { businessAccount, businessNumber } = request as MerchantPayoutRequest;
      return `merchant:${sameAccount(businessAccount)}:${sameAccount(businessNumber)}`;
    },
    currency: () => 'KES',
    wallet: walletOf,
  },
};

/** Whether `operation` names a payout a run can hold. */
export function isPayoutRunOperation(operation: unknown): operation is PayoutRunOperation {
  return typeof operation === 'string' && Object.hasOwn(PAYOUT_RUN_KINDS, operation);
}
