/** The OTLP/HTTP encodings (OTEL_EXPORTER_OTLP_PROTOCOL); gRPC export is not offered. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** OTEL_TRACES_SAMPLER's values that Quarry honours (the specification's built-in samplers). */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/**
 * Everything a process needs to export its traces, read once from the environment at start-up (the
 * standard OTEL_* variables, validated by @quarry/config). Tracing is off when there is none of it.
 */
export interface TracingSettings {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: OtlpProtocol;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS): a collector's API key, for example. */
  headers: Record<string, string>;
  /** The resource's service.name: OTEL_SERVICE_NAME, else named after the targets the process runs. */
  serviceName: string;
  /** More resource attributes (OTEL_RESOURCE_ATTRIBUTES), e.g. k8s.pod.name or deployment.environment. */
  resourceAttributes: Record<string, string>;
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  samplerRatio: number;
  /** How long finished spans wait to be sent in one batch (OTEL_BSP_SCHEDULE_DELAY). */
  scheduleDelayMs: number;
  /** How long one export may take, retries included (OTEL_EXPORTER_OTLP_TIMEOUT). */
  timeoutMs: number;
}
