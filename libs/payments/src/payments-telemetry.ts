import type * as OpenTelemetry from '@opentelemetry/api';
import type { Attributes, Context, Counter, Histogram, Span, Tracer } from '@opentelemetry/api';
import type { AttemptOutcome, AttemptTracing, CallTracing } from './payments-wire';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version';

type OpenTelemetryApi = typeof OpenTelemetry;

/**
 * `@opentelemetry/api` when the app has it (an optional peer), else `null`. Loaded on first use,
 * so an app without it pays nothing and an app with it but without an SDK gets no-op spans.
 */
let api: OpenTelemetryApi | null | undefined;
function openTelemetry(): OpenTelemetryApi | null {
  if (api === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require('@opentelemetry/api') as OpenTelemetryApi;
    } catch {
      api = null;
    }
  }
  return api;
}

interface Instruments {
  readonly api: OpenTelemetryApi;
  readonly tracer: Tracer;
  readonly duration: Histogram;
  /** No meter provider is registered: the histogram records nothing. */
  readonly metricsOff: boolean;
  /** The class of the API's no-op tracer provider, whose spans record nothing. */
  readonly noopTracerProvider: unknown;
}

let cached: { provider: unknown; instruments: Instruments } | undefined;

/**
 * The tracer (a proxy that follows the global provider) and the histogram of the current global
 * meter provider: made again only when the app registers another provider.
 */
function instruments(): Instruments | undefined {
  const otel = openTelemetry();
  if (!otel) return undefined;
  const provider = otel.metrics.getMeterProvider();
  if (cached?.provider !== provider) {
    const meter = provider.getMeter(LIBRARY_NAME, LIBRARY_VERSION);
    cached = {
      provider,
      instruments: {
        api: otel,
        tracer: otel.trace.getTracer(LIBRARY_NAME, LIBRARY_VERSION),
        // The stable HTTP client metric of the semantic conventions, in seconds.
        duration: meter.createHistogram('http.client.request.duration', {
          unit: 's',
          description: 'Duration of HTTP client requests.',
        }),
        metricsOff: meter.constructor === otel.createNoopMeter().constructor,
        noopTracerProvider: new otel.ProxyTracerProvider().getDelegate().constructor,
      },
    };
  }
  return cached.instruments;
}

/**
 * Whether the global tracer provider is the API's no-op one (no SDK registered): read per call,
 * since an app may register its SDK after the module started.
 */
function tracingOff(otel: Instruments): boolean {
  const provider = otel.api.trace.getTracerProvider();
  const delegate =
    provider instanceof otel.api.ProxyTracerProvider ? provider.getDelegate() : provider;
  return delegate.constructor === otel.noopTracerProvider;
}

/**
 * How a runner starts a call's trace: `undefined` when `@opentelemetry/api` is not installed, so
 * an app without it runs no tracing code per call.
 */
export function callTracing(): ((operation: string) => CallTrace | undefined) | undefined {
  return openTelemetry() ? (operation) => CallTrace.start(operation) : undefined;
}

/**
 * One logical call: a span that parents one client span per attempt. Attributes never carry a
 * credential, a phone number, an account number or a request body: only the operation, the
 * method, the server, the path template's result and the outcome.
 */
export class CallTrace implements CallTracing {
  private constructor(
    private readonly otel: Instruments,
    private readonly span: Span,
    private readonly context: Context,
  ) {}

  /** Starts the call's span, or returns undefined when OpenTelemetry is not installed. */
  static start(operation: string): CallTrace | undefined {
    const otel = instruments();
    // The API without an SDK: nothing would be recorded, so no span is even started.
    if (!otel || (otel.metricsOff && tracingOff(otel))) return undefined;
    const span = otel.tracer.startSpan(`payments ${operation}`, {
      kind: otel.api.SpanKind.INTERNAL,
      attributes: { 'malipo.operation': operation },
    });
    // A sampler that drops the call: nothing would be recorded, so nothing more is done per attempt.
    if (!span.isRecording() && otel.metricsOff) return undefined;
    return new CallTrace(otel, span, otel.api.trace.setSpan(otel.api.context.active(), span));
  }

  /** Starts the client span of attempt `attempt` (1-based) of `method` `url` (its credentials redacted). */
  attempt(method: string, url: string, attempt: number): AttemptTracing {
    const { api: otel, tracer, duration } = this.otel;
    const target = URL.canParse(url) ? new URL(url) : undefined;
    const attributes: Attributes = {
      'http.request.method': method,
      ...(target
        ? {
            'server.address': target.hostname,
            'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
            // No user:pass@ (the options refuse it); the wire redacts a password elsewhere in it.
            'url.full': `${target.origin}${target.pathname}${target.search}`,
          }
        : {}),
      ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
    };
    const span = tracer.startSpan(method, { kind: otel.SpanKind.CLIENT, attributes }, this.context);
    const started = performance.now();
    return {
      end: ({ statusCode, errorType }: AttemptOutcome) => {
        const result: Attributes = {
          ...(statusCode === undefined ? {} : { 'http.response.status_code': statusCode }),
          ...(errorType === undefined ? {} : { 'error.type': errorType }),
        };
        span.setAttributes(result);
        if (errorType !== undefined) span.setStatus({ code: otel.SpanStatusCode.ERROR });
        span.end();
        duration.record((performance.now() - started) / 1000, {
          'http.request.method': method,
          ...(attributes['server.address'] === undefined
            ? {}
            : {
                'server.address': attributes['server.address'],
                'server.port': attributes['server.port'],
              }),
          ...result,
        });
      },
    };
  }

  /** Ends the call's span: succeeded, or failed with the library's code. */
  end(failure?: { code: string; mayHaveExecuted: boolean }): void {
    if (failure) {
      this.span.setAttributes({
        'error.type': failure.code,
        'malipo.may_have_executed': failure.mayHaveExecuted,
      });
      this.span.setStatus({ code: this.otel.api.SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

/**
 * Adds to a counter of the library's meter: made on first use, and again when the app registers
 * another meter provider (it may do so after the module started); nothing without
 * `@opentelemetry/api`.
 */
export function libraryCounter(
  name: string,
  description: string,
): (value: number, attributes?: Attributes) => void {
  let made: { provider: unknown; counter: Counter } | undefined;
  return (value, attributes) => {
    const otel = openTelemetry();
    if (!otel) return;
    const provider = otel.metrics.getMeterProvider();
    if (made?.provider !== provider) {
      const meter = provider.getMeter(LIBRARY_NAME, LIBRARY_VERSION);
      made = { provider, counter: meter.createCounter(name, { description }) };
    }
    made.counter.add(value, attributes);
  };
}
