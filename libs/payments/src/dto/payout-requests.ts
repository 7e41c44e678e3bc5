import type { WalletType } from '../payments-options.interface';
import {
  AccountType,
  FallsBackToDefault,
  IsAccountType,
  IsAmount,
  IsBusinessAccount,
  IsCurrencyCode,
  IsHttpUrl,
  IsPhone,
  IsText,
  IsWalletType,
  REQUEST_RULES,
  Optional,
} from '../request-rules';

/** Kenyan mobile-money (M-Pesa) payout request, section 2.7. It has no `username`. */
export class MpesaPayoutRequest {
  /** Recipient, `0XXXXXXXXX` or `+254XXXXXXXXX`. */
  @IsPhone('kenyanPhone')
  phoneNumber!: string;

  /** KES, 10 to 250,000. */
  @IsAmount(REQUEST_RULES.kesMobileMoneyAmount)
  amount!: number;

  /** Payout description. */
  @IsText()
  narration!: string;

  /** Webhook URL; empty falls back to `defaultCallbackUrl`. */
  @FallsBackToDefault()
  @IsHttpUrl()
  callbackUrl?: string;

  /** Funding wallet; absent uses the client's `walletType`. */
  @Optional()
  @IsWalletType()
  walletType?: WalletType;
}

/** Pan-African payout to a mobile wallet or bank account, section 2.7. */
export class PanAfricanPayoutRequest {
  /** Account username; empty falls back to `defaultUsername`. */
  @FallsBackToDefault()
  @IsText()
  username?: string;

  /**
   * The network's `id` from network discovery (not its `code`); `toNetworkRequestFields(network)`
   * sets it.
   */
  @IsText()
  networkCode!: string;

  /** `bank` or `phone`. */
  @IsAccountType()
  accountName!: AccountType;

  /** Recipient's full name. */
  @IsText()
  accountHolderName!: string;

  /** Bank account or mobile-money number. */
  @IsText()
  accountNumber!: string;

  /** In the target currency, greater than 0. */
  @IsAmount(REQUEST_RULES.anyCurrencyAmount)
  amount!: number;

  /** With country code: `+` and digits. */
  @IsPhone('internationalPhone')
  phoneNumber!: string;

  /** From network discovery. */
  @IsText()
  channelId!: string;

  /** Payout description. */
  @IsText()
  narration!: string;

  /** ISO 4217 currency code. */
  @IsCurrencyCode()
  currency!: string;

  /** Webhook URL; empty falls back to `defaultCallbackUrl`. */
  @FallsBackToDefault()
  @IsHttpUrl()
  callbackUrl?: string;

  /** `bank` or `phone`; must match the network type. */
  @IsAccountType()
  transactionChannel!: AccountType;

  /** From network discovery. */
  @IsText()
  providerName!: string;

  /** From network discovery. */
  @IsText()
  providerCode!: string;

  /** Funding wallet; absent uses the client's `walletType`. */
  @Optional()
  @IsWalletType()
  walletType?: WalletType;
}

/** Payout to a Kenyan merchant Paybill or Till, section 2.7. */
export class MerchantPayoutRequest {
  /** Account username; empty falls back to `defaultUsername`. */
  @FallsBackToDefault()
  @IsText()
  username?: string;

  /** KES, greater than 0. */
  @IsAmount(REQUEST_RULES.kesAmount)
  amount!: number;

  /** `+254XXXXXXXXX` only. */
  @IsPhone('kenyanInternationalPhone')
  phoneNumber!: string;

  /** Payment description. */
  @IsText()
  narration!: string;

  /** Paybill or Till number (digits). */
  @IsBusinessAccount()
  businessAccount!: string;

  /** Account number for a Paybill, or the literal `N/A` for a Till. */
  @IsText()
  businessNumber!: string;

  /** Webhook URL; empty falls back to `defaultCallbackUrl`. */
  @FallsBackToDefault()
  @IsHttpUrl()
  callbackUrl?: string;

  /** Funding wallet; absent uses the client's `walletType`. */
  @Optional()
  @IsWalletType()
  walletType?: WalletType;
}
