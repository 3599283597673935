import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { format } from 'node:util';
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { loggingErrorHandler, setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { TracingSettings } from '@quarry/config';

/** The release of this build: the version every package of the workspace carries (this one's, from dist/..). */
function quarryVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/*
 * The OpenTelemetry SDK, loaded only when tracing is on (start-tracing.ts imports this file on demand):
 * a process without an endpoint never loads the exporters or the provider.
 */

function sampler(settings: TracingSettings): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}

/** The exporter of the configured OTLP/HTTP encoding (OTEL_EXPORTER_OTLP_PROTOCOL). */
export function createExporter(settings: TracingSettings): SpanExporter {
  const options = { url: settings.url, headers: settings.headers, timeoutMillis: settings.timeoutMs };
  return settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
}

export interface SdkHandle {
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
}

/**
 * Registers this thread's tracer provider, AsyncLocalStorage context manager and W3C propagator as the
 * API's globals, and routes the SDK's own complaints (an unreachable collector) to `warn`.
 */
export function registerSdk(
  settings: TracingSettings,
  warn: (message: string) => void,
  exporter: SpanExporter = createExporter(settings),
): SdkHandle {
  const say = (message: string, ...args: unknown[]) => warn(format(message, ...args));
  const diagLogger: DiagLogger = {
    error: say,
    warn: say,
    info: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
  };
  diag.setLogger(diagLogger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  // A failed export reaches the global error handler, whose default prints the error as JSON, stack and all.
  setGlobalErrorHandler((err) =>
    warn(err instanceof Error ? err.message : typeof err === 'string' ? err : format(err)),
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      // Which replica and which build a span came from: without them the spans of two pods of one
      // Deployment, or of two versions during a rollout, cannot be told apart. OTEL_RESOURCE_ATTRIBUTES wins.
      'service.instance.id': `${os.hostname()}/${process.pid}`,
      'service.version': quarryVersion(),
      ...settings.resourceAttributes,
      'service.name': settings.serviceName,
      'process.pid': process.pid,
    }),
    sampler: sampler(settings),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.scheduleDelayMs })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      // Spans still in the batch are sent before the globals go.
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
      setGlobalErrorHandler(loggingErrorHandler());
    },
  };
}
