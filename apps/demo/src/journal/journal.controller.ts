import { Controller, Get, HttpCode, Post, Query, UsePipes, ValidationPipe } from '@nestjs/common';
import { ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional } from 'class-validator';
import { PAYMENTS_JOURNAL_STATES, PaymentsReconciler } from '@malipo/nestjs';
import type {
  PaymentsJournalEntry,
  PaymentsJournalState,
  PaymentsReconcileSummary,
} from '@malipo/nestjs';

/** Which journal entries `GET /journal` lists. */
export class JournalQuery {
  @ApiPropertyOptional({ enum: PAYMENTS_JOURNAL_STATES, description: 'As the entry stands now' })
  @IsOptional()
  @IsIn(PAYMENTS_JOURNAL_STATES)
  state?: PaymentsJournalState;

  @ApiPropertyOptional({ example: '2026-01-01T00:00:00Z', description: 'Started at or after' })
  @IsOptional()
  @IsISO8601()
  since?: string;
}

/** What `POST /journal/reconcile` may be asked. */
export class ReconcileQuery {
  @ApiPropertyOptional({ example: '2026-01-01T00:00:00Z', description: 'Started at or after' })
  @IsOptional()
  @IsISO8601()
  since?: string;
}

/**
 * What the payments journal knows of every money-moving call: an auditor's view. Entries hold no
 * phone number, account number or name (only keyed fingerprints of the request and of its phone
 * number), so they can be shown as they are. A date the reconciler cannot read is a 400, a store
 * that fails a 503: `PaymentsExceptionFilter` answers both.
 */
@ApiTags('journal')
@Controller('journal')
@UsePipes(new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true }))
export class JournalController {
  constructor(private readonly reconciler: PaymentsReconciler) {}

  @Get()
  @ApiOperation({ summary: 'List journal entries, oldest first' })
  entries(@Query() query: JournalQuery): Promise<PaymentsJournalEntry[]> {
    return this.reconciler.entries(query);
  }

  @Get('in-doubt')
  @ApiOperation({ summary: 'Calls that may have executed with no known outcome' })
  inDoubt(): Promise<PaymentsJournalEntry[]> {
    return this.reconciler.inDoubt();
  }

  @Post('reconcile')
  @HttpCode(200)
  @ApiOperation({ summary: 'Settle what a status look-up can settle; counts and sums per state' })
  reconcile(@Query() query: ReconcileQuery): Promise<PaymentsReconcileSummary> {
    return this.reconciler.reconcile(query);
  }
}
