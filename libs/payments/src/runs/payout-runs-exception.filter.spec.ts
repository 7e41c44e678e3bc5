import { Controller, Get, Param, UseFilters } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  PayoutRunConflictError,
  PayoutRunCreationError,
  PayoutRunNotFoundError,
  PayoutRunRefusedError,
  PayoutRunStateError,
  PayoutRunStoreError,
} from './payout-run.errors';
import { PayoutRunsExceptionFilter } from './payout-runs-exception.filter';

const REDIS_DOWN = new Error('connect ECONNREFUSED 10.0.0.7:6379 (redis://:s3cret@10.0.0.7)');

/** Each error a `PayoutRunsService` call may reject with, by name. */
const ERRORS: Record<string, () => Error> = {
  refused: () =>
    new PayoutRunRefusedError(
      [{ itemId: 'emp-1', field: 'request.amount', rule: 'min', message: 'amount is too small' }],
      [{ currency: 'KES', required: 5000, available: 1200 }],
    ),
  conflict: () => new PayoutRunConflictError('payroll-2026-11', 'items'),
  missing: () => new PayoutRunNotFoundError('payroll-2026-12'),
  state: () => new PayoutRunStateError('payroll-2026-10', 'completed', 'pause'),
  creation: () => new PayoutRunCreationError('payroll-2026-11', true, REDIS_DOWN),
  unreadable: () => new PayoutRunStoreError('payroll-2026-09', 'read', REDIS_DOWN),
  unpaused: () => new PayoutRunStoreError('payroll-2026-09', 'pause', REDIS_DOWN),
  other: () => new Error('not a payout run error'),
};

@Controller('runs')
@UseFilters(PayoutRunsExceptionFilter)
class ThrowingController {
  @Get(':which')
  fail(@Param('which') which: string): never {
    throw ERRORS[which]();
  }
}

describe('PayoutRunsExceptionFilter (over HTTP, Express)', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [ThrowingController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(() => app.close());

  const answer = async (which: string) => {
    const response = await fetch(`${url}/runs/${which}`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('answers a refused run 400 with every problem and the shortfall: nothing was sent', async () => {
    expect(await answer('refused')).toEqual({
      status: 400,
      body: {
        statusCode: 400,
        error: 'Bad Request',
        message: expect.stringContaining('nothing was sent') as string,
        mayHaveExecuted: false,
        problems: [
          { itemId: 'emp-1', field: 'request.amount', rule: 'min', message: 'amount is too small' },
        ],
        shortfalls: [{ currency: 'KES', required: 5000, available: 1200 }],
      },
    });
  });

  it.each([
    ['conflict', 409, { runId: 'payroll-2026-11', mayHaveExecuted: false }],
    ['missing', 404, { runId: 'payroll-2026-12' }],
    ['state', 409, { runId: 'payroll-2026-10', state: 'completed' }],
    ['creation', 503, { runId: 'payroll-2026-11', mayHaveExecuted: true }],
    ['unreadable', 503, { runId: 'payroll-2026-09', mayHaveExecuted: false }],
    ['unpaused', 503, { runId: 'payroll-2026-09', mayHaveExecuted: true }],
  ])('answers %s %i with what the caller needs', async (which, status, fields) => {
    const { status: got, body } = await answer(which);
    expect(got).toBe(status);
    expect(body).toMatchObject({ statusCode: status, ...fields });
  });

  it("never answers with the store's error, and leaves other errors to Nest", async () => {
    const creation = await answer('creation');
    expect(JSON.stringify(creation.body)).not.toMatch(/ECONNREFUSED|s3cret|10\.0\.0\.7/);
    const unpaused = await answer('unpaused');
    expect(JSON.stringify(unpaused.body)).not.toMatch(/ECONNREFUSED|s3cret|10\.0\.0\.7/);
    expect(unpaused.body.message).toContain('read it with get() before trying again');
    expect(creation.body.message).toContain('create() again with runId payroll-2026-11');
    expect(await answer('other')).toEqual({
      status: 500,
      body: { statusCode: 500, message: 'Internal server error' },
    });
  });
});
