import {
  AccountType,
  FallsBackToDefault,
  IsAccountType,
  IsAmount,
  IsCurrencyCode,
  IsHttpUrl,
  IsPhone,
  IsText,
  REQUEST_RULES,
  Optional,
} from '../request-rules';

/** Kenyan mobile-money (M-Pesa STK push) collection request, section 2.5. */
export class MpesaCollectionRequest {
  /** Account username; empty falls back to `defaultUsername`. */
  @FallsBackToDefault()
  @IsText()
  username?: string;

  /** KES, 10 to 250,000. */
  @IsAmount(REQUEST_RULES.kesMobileMoneyAmount)
  amount!: number;

  /** `0XXXXXXXXX` or `+254XXXXXXXXX`. */
  @IsPhone('kenyanPhone')
  phoneNumber!: string;

  /** Description shown to the customer. */
  @IsText()
  narration!: string;

  /** Webhook URL; empty falls back to `defaultCallbackUrl`. */
  @FallsBackToDefault()
  @IsHttpUrl()
  callbackUrl?: string;
}

/** Hosted card checkout collection request, section 2.5. */
export class CardCollectionRequest {
  /** Account username; empty falls back to `defaultUsername`. */
  @FallsBackToDefault()
  @IsText()
  username?: string;

  /** KES, at least 100. */
  @IsAmount(REQUEST_RULES.cardAmount)
  amount!: number;

  /** `0XXXXXXXXX` or `+254XXXXXXXXX`. */
  @IsPhone('kenyanPhone')
  phoneNumber!: string;

  /** Payment description. */
  @IsText()
  narration!: string;

  /** Webhook URL; empty falls back to `defaultCallbackUrl`. */
  @FallsBackToDefault()
  @IsHttpUrl()
  callbackUrl?: string;
}

/** Pan-African mobile-money or bank collection request, section 2.5. */
export class PanAfricanCollectionRequest {
  /** Account username; empty falls back to `defaultUsername`. */
  @FallsBackToDefault()
  @IsText()
  username?: string;

  /** `bank` or `phone`. */
  @IsAccountType()
  accountName!: AccountType;

  /** In the target currency, greater than 0. */
  @IsAmount(REQUEST_RULES.anyCurrencyAmount)
  amount!: number;

  /** With country code: `+` and digits. */
  @IsPhone('internationalPhone')
  phoneNumber!: string;

  /** Mobile-money or bank account number. */
  @IsText()
  accountNumber!: string;

  /**
   * The network's `id` from network discovery (not its `code`); `toNetworkRequestFields(network)`
   * sets it.
   */
  @IsText()
  networkCode!: string;

  /** From network discovery. */
  @IsText()
  channelId!: string;

  /** Payment description. */
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

  /** Where the customer returns after checkout. */
  @Optional()
  @IsHttpUrl()
  redirectUrl?: string;
}
