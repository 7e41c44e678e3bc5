import { metrics, ProxyTracer, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';
import { callTracing } from './payments-telemetry';
import type { ServiceAPIError } from './errors';

const PASSWORD = 'telemetry-secret-password';
const PHONE = '0712345678';
const PAYOUT = OPERATION_CASES[3].request;
const PAYOUT_ANSWER = successBody('payout');

describe('OpenTelemetry: one span per call, one client span per attempt, the duration histogram', () => {
  let server: RecordingServer;
  const spans = new InMemorySpanExporter();
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 60_000,
  });
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  const meterProvider = new MeterProvider({ readers: [reader] });

  beforeAll(async () => {
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    server = await RecordingServer.start();
  });
  afterEach(() => {
    spans.reset();
    server.reset();
  });
  afterAll(async () => {
    await server.close();
    await meterProvider.shutdown();
    await tracerProvider.shutdown();
    trace.disable();
    metrics.disable();
  });

  const client = () =>
    createPaymentsClient({ apiUsername: 'api-user', apiPassword: PASSWORD, baseUrl: server.url });

  it('traces a retried call: the call span parents a 503 attempt and a 200 attempt', async () => {
    server.reply(
      { status: 503, body: { status: 503, success: false, message: 'busy' } },
      { status: 200, body: PAYOUT_ANSWER },
    );

    await client().payouts.mpesa(PAYOUT);

    const finished = spans.getFinishedSpans();
    const call = finished.find((span) => span.name === 'payments payouts.mpesa');
    const attempts = finished.filter((span) => span.name === 'POST');
    expect(call).toBeDefined();
    expect(call?.attributes).toEqual({ 'malipo.operation': 'payouts.mpesa' });
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
      expect(attempt.spanContext().traceId).toBe(call?.spanContext().traceId);
    }
    const port = Number(new URL(server.url).port);
    expect(attempts[0].attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.full': `${server.url}/api/v2/withdrawal`,
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(attempts[1].attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.full': `${server.url}/api/v2/withdrawal`,
      'http.request.resend_count': 1,
      'http.response.status_code': 200,
    });

    await reader.forceFlush();
    const histogram = metricExporter
      .getMetrics()
      .flatMap((resource) => resource.scopeMetrics)
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === 'http.client.request.duration');
    expect(histogram?.descriptor.unit).toBe('s');
    expect(histogram?.dataPointType).toBe(DataPointType.HISTOGRAM);
    const statuses = histogram?.dataPoints.map(
      (point) => point.attributes['http.response.status_code'],
    );
    expect(statuses).toEqual(expect.arrayContaining([503, 200]));
  });

  it('marks a failed call with the library code and mayHaveExecuted', async () => {
    server.fallback = () => ({ status: 502 });

    const error = (await client()
      .payouts.mpesa(PAYOUT, { retryAmbiguous: false })
      .catch((e: unknown) => e)) as ServiceAPIError;

    const call = spans.getFinishedSpans().find((span) => span.name === 'payments payouts.mpesa');
    expect(error.mayHaveExecuted).toBe(true);
    expect(call?.attributes).toMatchObject({
      'error.type': 'SERVICE_ERROR',
      'malipo.may_have_executed': true,
    });
    expect(call?.status.code).toBe(2);
  });

  it('never puts a credential, a phone number or a body in an attribute', async () => {
    server.fallback = (request) =>
      request.method === 'GET'
        ? {
            status: 200,
            body: {
              code: '9BD141203407eW',
              amount: 500,
              transaction_details: { status: 'success', phone_number: '+254712345678' },
            },
          }
        : { status: 200, body: PAYOUT_ANSWER };

    await client().payouts.mpesa(PAYOUT);
    await client().transactions.status('9BD141203407eW');

    const everything = JSON.stringify(
      spans.getFinishedSpans().map((span) => [span.name, span.attributes]),
    );
    const token = Buffer.from(`api-user:${PASSWORD}`).toString('base64');
    for (const secret of [PASSWORD, token, PHONE, '254712345678', 'Refund']) {
      expect(everything).not.toContain(secret);
    }
    expect(everything).toContain('GET');
  });

  it('redacts the password from url.full when a team put it in baseUrl, as logs and errors do', async () => {
    server.fallback = () => ({ status: 200, body: PAYOUT_ANSWER });
    for (const baseUrl of [`${server.url}/?key=${PASSWORD}`, `${server.url}/${PASSWORD}`]) {
      spans.reset();
      // The server answers any path: where the secret leads the request is the team's choice.
      await createPaymentsClient({ apiUsername: 'api-user', apiPassword: PASSWORD, baseUrl })
        .payouts.mpesa(PAYOUT)
        .catch(() => undefined);
      const attempts = spans.getFinishedSpans().filter((span) => span.name === 'POST');
      expect(attempts).toHaveLength(1);
      expect(String(attempts[0].attributes['url.full'])).toContain('REDACTED');
      expect(JSON.stringify(attempts.map((span) => span.attributes))).not.toContain(PASSWORD);
    }
  });
});

describe('callTracing without an SDK', () => {
  afterEach(() => {
    trace.disable();
    metrics.disable();
  });

  it('starts no span while only the API is installed, and follows a tracer provider registered later', () => {
    const startTrace = callTracing();
    expect(startTrace).toBeDefined();
    // With no SDK the library's tracer is the API's proxy, which would hand out no-op spans.
    const startSpan = jest.spyOn(ProxyTracer.prototype, 'startSpan');
    expect(startTrace?.('collectionsMpesa')).toBeUndefined();
    expect(startSpan).not.toHaveBeenCalled();
    startSpan.mockRestore();

    const spans = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
    );
    const callTrace = startTrace?.('collectionsMpesa');
    expect(callTrace).toBeDefined();
    callTrace?.end();
    expect(spans.getFinishedSpans().map((span) => span.name)).toEqual([
      'payments collectionsMpesa',
    ]);
  });
});
