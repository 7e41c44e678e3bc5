import kenyaSuccess from '../../spec-support/real-service/webhooks/kenya-success.json';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OPERATION_CASES, successBody } from '../../spec-support/operation-cases';
import { RecordingServer } from '../../spec-support/recording-server';
import { waitFor } from '../../spec-support/wait-for';
import { InMemoryPaymentsJournal } from '../journal/in-memory-payments-journal';
import { PaymentsModule } from '../payments.module';
import { PayoutsService } from '../payouts.service';
import { PaymentsWebhookModule } from './payments-webhook.module';

const PAYOUT = OPERATION_CASES.find((c) => c.operation === 'payouts.mpesa')!.request as {
  phoneNumber: string;
  amount: number;
  narration: string;
};
/** The reference of `successBody('payout')`. */
const PAYOUT_REFERENCE = '9BD141203407eW';

describe('PaymentsWebhookModule with the payments journal', () => {
  let service: RecordingServer;
  let app: INestApplication;
  let journal: InMemoryPaymentsJournal;

  beforeAll(async () => {
    service = await RecordingServer.start();
  });
  beforeEach(async () => {
    journal = new InMemoryPaymentsJournal();
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiUsername: 'shop-user',
          apiPassword: 'webhook-journal-spec-password',
          baseUrl: service.url,
          maxRetries: 0,
          defaultCallbackUrl: 'https://shop.example.com/webhooks/payments',
          journal,
        }),
        PaymentsWebhookModule.forRoot({}),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
  });
  afterEach(async () => {
    await app.close();
    service.reset();
  });
  afterAll(() => service.close());

  it('answers 503, before any look-up, an event that names by key alone a call being sent', async () => {
    let release = () => {};
    const answered = new Promise<void>((resolve) => (release = resolve));
    service.fallback = (request) =>
      request.method === 'POST'
        ? { status: 200, body: successBody('payout'), after: answered }
        : { status: 404, body: { success: false, message: 'not found' } };
    const call = app.get(PayoutsService).mpesa(PAYOUT, { idempotencyKey: 'salary-7' });
    try {
      await waitFor(
        () => service.requests.find((request) => request.method === 'POST'),
        'the payout at the service',
      );

      // Its key is in a URL anyone may see; its reference is another transaction's.
      const response = await fetch(`${await app.getUrl()}/webhooks/payments?malipo_key=salary-7`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...kenyaSuccess,
          transaction_reference: 'FORGED000001eW',
          amount: PAYOUT.amount,
        }),
      });

      expect(response.status).toBe(503);
      // No status look-up was spent on it: nothing it could say would settle the call.
      expect(service.requests.filter((request) => request.method === 'GET')).toEqual([]);
    } finally {
      release();
    }
    await call;
    expect(await journal.get('salary-7')).toMatchObject({
      state: 'accepted',
      reference: PAYOUT_REFERENCE,
    });
  });
});
