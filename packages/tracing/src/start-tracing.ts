import type { TracingSettings } from '@quarry/config';

/*
 * Tracing is per thread (the API's globals live on a thread's globalThis): `quarry serve` starts it in
 * its main thread and again in its services thread, each with its own provider and exporter.
 */
let enabled = false;

/** Whether this thread exports traces: the instrumentation does nothing at all when it does not. */
export function tracingEnabled(): boolean {
  return enabled;
}

export interface RunningTracing {
  /** Sends the spans still waiting, then stops exporting. */
  shutdown(): Promise<void>;
  /** Sends the spans waiting now (tests, and before a process exits on its own). */
  forceFlush(): Promise<void>;
}

const OFF: RunningTracing = { shutdown: async () => undefined, forceFlush: async () => undefined };

/**
 * Starts exporting this thread's spans over OTLP/HTTP as `settings` say; without settings (no
 * OTEL_EXPORTER_OTLP_ENDPOINT) nothing is loaded or registered, and every span helper is a no-op.
 * `warn` receives the SDK's own problems, such as a collector that cannot be reached.
 */
export async function startTracing(
  settings: TracingSettings | undefined,
  warn: (message: string) => void,
): Promise<RunningTracing> {
  if (!settings) return OFF;
  if (enabled) throw new Error('tracing is already started in this thread');
  const { registerSdk } = await import('./otel-sdk.js');
  const sdk = registerSdk(settings, warn);
  enabled = true;
  return {
    forceFlush: () => sdk.forceFlush(),
    shutdown: async () => {
      enabled = false;
      await sdk.shutdown();
    },
  };
}
