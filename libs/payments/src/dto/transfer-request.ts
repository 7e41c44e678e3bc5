import type { WalletType } from '../payments-options.interface';
import {
  IsAmount,
  IsCurrencyCode,
  IsPhone,
  IsText,
  IsWalletType,
  Optional,
  REQUEST_RULES,
} from '../request-rules';

/** Transfer to another account of the service (`transfers.send`, docs/wire-contract.md). */
export class TransferRequest {
  /** Username of the receiving account. */
  @IsText()
  receiverUsername!: string;

  /** Greater than 0. */
  @IsAmount(REQUEST_RULES.anyCurrencyAmount)
  amount!: number;

  /** Description of the transfer. */
  @IsText()
  narration!: string;

  /** Receiver's phone with country code, `+` and 7 to 15 digits. */
  @Optional()
  @IsPhone('internationalPhone')
  phoneNumber?: string;

  /** ISO 4217 code; the service converts when it differs from the wallet's. */
  @Optional()
  @IsCurrencyCode()
  currency?: string;

  /** Funding wallet; absent uses the client's `walletType`. */
  @Optional()
  @IsWalletType()
  walletType?: WalletType;
}
