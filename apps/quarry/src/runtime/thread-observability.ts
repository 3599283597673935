import type { Config } from '@quarry/config';
import { createRootLogger, type Logger } from '@quarry/logger';
import { startTracing, traceLogFields, type RunningTracing } from '@quarry/tracing';

/** The SDK repeats a failing export every batch: one warning a minute says it as well. */
const WARN_EVERY_MS = 60_000;

/**
 * The root logger and the tracing of a serving thread (the process's main thread, or its services
 * thread), from the one config read at start-up. Log lines carry the active trace's ids exactly when the
 * thread exports traces; without OTEL_EXPORTER_OTLP_ENDPOINT neither the mixin nor the SDK is installed.
 */
export async function startThreadObservability(
  config: Config,
  bindings: Record<string, string> = {},
): Promise<{ log: Logger; tracing: RunningTracing }> {
  const root = createRootLogger(config.logLevel, undefined, {
    ...(config.tracing ? { mixin: traceLogFields } : {}),
    pretty: config.logFormat === 'pretty',
  });
  const log = Object.keys(bindings).length > 0 ? root.child(bindings) : root;
  const tracingLog = log.child({ module: 'tracing' });
  let last = 0;
  let suppressed = 0;
  const warn = (message: string) => {
    const now = Date.now();
    if (now - last < WARN_EVERY_MS) {
      suppressed++;
      return;
    }
    tracingLog.warn({ suppressed, endpoint: config.tracing?.url }, `trace export problem: ${message}`);
    last = now;
    suppressed = 0;
  };
  const tracing = await startTracing(config.tracing, warn);
  if (config.tracing)
    log.info(
      { endpoint: config.tracing.url, protocol: config.tracing.protocol, serviceName: config.tracing.serviceName },
      'exporting traces',
    );
  return { log, tracing };
}
