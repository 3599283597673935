export { startTracing, tracingEnabled, type RunningTracing } from './start-tracing';
export {
  extractTraceContext,
  failSpan,
  injectTraceContext,
  inSpan,
  SpanKind,
  traceCarrier,
  traceLogFields,
  type Context,
  type Span,
  type SpanOptions,
  type TraceCarrier,
} from './spans';
