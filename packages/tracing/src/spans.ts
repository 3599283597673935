import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AppError, ERROR_TABLE, toAppError } from '@quarry/errors';
import { tracingEnabled } from './start-tracing';

export { SpanKind, type Span, type Context };

/** The instrumentation scope of every Quarry span. */
const SCOPE = 'quarry';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent: a context extracted from a carrier; by default the active one. */
  parent?: Context;
}

/**
 * Runs `fn` inside a new span, active for everything it awaits, and ends the span however `fn` ends: a
 * rejection is recorded on it (failSpan) and rethrown. With tracing off, `fn(undefined)` and nothing
 * else, so instrumented code costs one boolean test.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return fn(undefined);
  const parent = options.parent ?? context.active();
  const kind = options.kind ?? SpanKind.INTERNAL;
  const span = trace.getTracer(SCOPE).startSpan(name, { kind, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failSpan(span, err, kind);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Records a failure on a span: `error.type` is the stable AppError code (what /metrics and the logs
 * say), the status is ERROR with the detail for a fault of this process or what it called (5xx codes),
 * and for a client's own mistake only on client-side spans (OpenTelemetry's HTTP and RPC span
 * conventions: a 4xx does not make a server span an error). An internal fault keeps its exception.
 */
export function failSpan(span: Span | undefined, err: unknown, kind: SpanKind = SpanKind.INTERNAL): AppError {
  const app = toAppError(err);
  if (!span) return app;
  span.setAttribute('error.type', app.code);
  if (ERROR_TABLE[app.code].http >= 500 || kind !== SpanKind.SERVER)
    span.setStatus({ code: SpanStatusCode.ERROR, message: app.detail });
  if (app.code === 'INTERNAL') {
    const cause = app.cause instanceof Error ? app.cause : err instanceof Error ? err : undefined;
    if (cause) span.recordException(cause);
  }
  return app;
}

/** W3C trace context of the active span into a carrier (gRPC metadata, job data); nothing when off. */
export function injectTraceContext(set: (key: string, value: string) => void): void {
  if (!tracingEnabled()) return;
  propagation.inject(context.active(), undefined, { set: (_carrier, key, value) => set(key, value) });
}

/** The trace context a carrier brought (`traceparent`, `tracestate`); the root context when none is valid. */
export function extractTraceContext(get: (key: string) => string | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, undefined, {
    get: (_carrier, key) => get(key),
    keys: () => ['traceparent', 'tracestate'],
  });
}

/** What a queued job carries so its consumer's span joins the producer's trace. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** The active trace context as job data fields; empty when tracing is off. */
export function traceCarrier(): TraceCarrier {
  const carrier: TraceCarrier = {};
  injectTraceContext((key, value) => {
    if (key === 'traceparent' || key === 'tracestate') carrier[key] = value;
  });
  return carrier;
}

/**
 * The pino mixin of a process that traces: `trace_id` and `span_id` of the span active when a line is
 * written, so a log line leads to its trace and back.
 */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
