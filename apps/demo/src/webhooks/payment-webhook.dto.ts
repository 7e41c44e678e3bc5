import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';

export const WEBHOOK_EVENTS = [
  'payment.completed',
  'payment.failed',
  'payout.completed',
  'payout.failed',
] as const;

/** The contract's webhook payload. Unknown extra keys are accepted and kept in the raw body. */
export class PaymentWebhookDto {
  @ApiProperty({ example: 'TX-1001' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  transaction_reference!: string;

  @ApiProperty({ example: 'SUCCESS' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  status!: string;

  @ApiProperty({ enum: WEBHOOK_EVENTS })
  @IsIn(WEBHOOK_EVENTS)
  event!: (typeof WEBHOOK_EVENTS)[number];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  success?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsNumber()
  amount?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  currency?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  message?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  channel?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  occurred_at?: string;
}
