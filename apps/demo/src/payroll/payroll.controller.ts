import { randomBytes } from 'node:crypto';
import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Res,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExcludeEndpoint,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { PAYROLL_SAMPLE_CSV, payrollPage, payrollPagePolicy } from './payroll.page';
import type { PayrollProgress } from './payroll.service';
import { PayrollService } from './payroll.service';

/** The media types `POST /payroll/runs` reads as CSV text (payroll.module.ts parses them). */
export const PAYROLL_CSV_TYPES = ['text/csv', 'text/plain'];

const RUN_ID = new ParseUUIDPipe({ version: '4' });

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A payroll page and its API: a CSV file becomes a payout run (`@malipo/nestjs/runs`), refused
 * with a report of every broken row, or followed to the end with counts and sums per state.
 */
@ApiTags('payroll')
@Controller('payroll')
export class PayrollController {
  constructor(private readonly payroll: PayrollService) {}

  @Get()
  @ApiExcludeEndpoint()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  page(@Res({ passthrough: true }) response: Response): string {
    const nonce = randomBytes(16).toString('base64');
    response.setHeader('Content-Security-Policy', payrollPagePolicy(nonce));
    return payrollPage(nonce);
  }

  @Get('sample.csv')
  @ApiExcludeEndpoint()
  @Header('Content-Type', 'text/csv; charset=utf-8')
  @Header('Content-Disposition', 'attachment; filename="payroll-sample.csv"')
  sample(): string {
    return PAYROLL_SAMPLE_CSV;
  }

  @Post('runs')
  @ApiOperation({
    summary: 'Pay a CSV file as one payout run',
    description:
      '201 with the run; 400 with every broken rule of every row (line, itemId, field, rule) or the balance shortfalls: nothing was sent.',
  })
  @ApiConsumes(...PAYROLL_CSV_TYPES)
  @ApiBody({ schema: { type: 'string', example: 'itemId,kind,phoneNumber,amount,narration' } })
  @ApiQuery({ name: 'name', required: false })
  @ApiQuery({ name: 'ratePerSecond', required: false, type: Number })
  async create(
    @Body() csv: unknown,
    @Query('name') name: unknown,
    @Query('ratePerSecond') ratePerSecond: unknown,
  ): Promise<PayrollProgress & { runId: string }> {
    if (typeof csv !== 'string') {
      throw new UnsupportedMediaTypeException(
        'Send the CSV file as the body, with Content-Type: text/csv',
      );
    }
    const rate = optionalText(ratePerSecond);
    const runName = optionalText(name);
    const progress = await this.payroll.create(csv, {
      ...(runName === undefined ? {} : { name: runName }),
      // The runs API judges the number (a positive integer), like every other input.
      ...(rate === undefined ? {} : { ratePerSecond: Number(rate) }),
    });
    return { runId: progress.run.runId, ...progress };
  }

  @Get('runs/:id')
  @ApiOperation({ summary: 'A run with its items counted and summed per state' })
  progress(@Param('id', RUN_ID) runId: string): Promise<PayrollProgress> {
    return this.payroll.progress(runId);
  }

  @Post('runs/:id/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send nothing new until resumed (sends in flight end)' })
  pause(@Param('id', RUN_ID) runId: string): Promise<PayrollProgress> {
    return this.payroll.act(runId, 'pause');
  }

  @Post('runs/:id/resume')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a paused run' })
  resume(@Param('id', RUN_ID) runId: string): Promise<PayrollProgress> {
    return this.payroll.act(runId, 'resume');
  }

  @Post('runs/:id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Refuse every queued item; sent ones are followed to their outcome' })
  cancel(@Param('id', RUN_ID) runId: string): Promise<PayrollProgress> {
    return this.payroll.act(runId, 'cancel');
  }

  @Get('runs/:id/report.csv')
  @ApiOperation({ summary: 'Every item with its state, amount, reference and reason' })
  @ApiProduces('text/csv')
  @Header('Content-Type', 'text/csv; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  async report(
    @Param('id', RUN_ID) runId: string,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string> {
    const csv = await this.payroll.report(runId);
    response.setHeader('Content-Disposition', `attachment; filename="payroll-${runId}.csv"`);
    return csv;
  }
}
