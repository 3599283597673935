import { z } from 'zod';
import { partOf, setting, settingGroup } from '../setting';
import { keyValueList, otlpProtocol, url } from '../setting-rules';
import { SAMPLERS } from '../tracing-settings';

/*
 * OpenTelemetry traces, by the specification's own variable names ("Environment Variable Specification"
 * and "OTLP Exporter Configuration"): on when an endpoint is set, unless OTEL_SDK_DISABLED=true.
 */
export const tracingSettings = settingGroup('Traces (OpenTelemetry)', {
  OTEL_EXPORTER_OTLP_ENDPOINT: setting(url(['http:', 'https:']).optional(), {
    doc:
      "OpenTelemetry traces to this OTLP/HTTP endpoint (`/v1/traces` is appended; a collector's HTTP port, " +
      '4318); unset, no tracing code runs',
    default: 'unset (tracing off)',
    readBy: ['every process'],
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting(url(['http:', 'https:']).optional(), {
    doc: 'the full traces URL, used as given, before `OTEL_EXPORTER_OTLP_ENDPOINT`',
    readBy: ['every process'],
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: setting(otlpProtocol.default('http/protobuf'), {
    doc: '`http/protobuf` or `http/json` (`grpc` is refused: export is over HTTP only)',
    readBy: ['every process'],
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: partOf('OTEL_EXPORTER_OTLP_PROTOCOL', otlpProtocol.optional(), {
    readBy: ['every process'],
  }),
  OTEL_EXPORTER_OTLP_HEADERS: setting(keyValueList.optional(), {
    doc: "`key=value,…` (values percent-encoded) sent with every export, e.g. a collector's API key",
    readBy: ['every process'],
  }),
  OTEL_EXPORTER_OTLP_TIMEOUT: setting(z.coerce.number().int().min(1).max(600_000).default(10000), {
    doc: 'ms one export may take, retries included',
    readBy: ['every process'],
  }),
  OTEL_SERVICE_NAME: setting(z.string().min(1).optional(), {
    doc: "`service.name` of the process's spans",
    default: '`quarry` in `all`, else `quarry-<targets>` (`quarry-gateway`, `quarry-chart-worker`)',
    readBy: ['every process'],
  }),
  OTEL_RESOURCE_ATTRIBUTES: setting(keyValueList.optional(), {
    doc: 'more resource attributes, `key=value,…` (`deployment.environment=prod,k8s.pod.name=…`)',
    readBy: ['every process'],
  }),
  OTEL_TRACES_SAMPLER: setting(
    z.enum(SAMPLERS, { error: () => `must be one of ${SAMPLERS.join(', ')}` }).default('parentbased_always_on'),
    {
      doc:
        'which calls are traced: `always_on`, `always_off`, `traceidratio`, `parentbased_*` of those, with the ' +
        'ratio (0–1) as the argument',
      readBy: ['every process'],
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: partOf('OTEL_TRACES_SAMPLER', z.coerce.number().min(0).max(1).default(1), {
    readBy: ['every process'],
  }),
  OTEL_BSP_SCHEDULE_DELAY: setting(z.coerce.number().int().min(0).max(600_000).default(5000), {
    doc: 'ms finished spans wait to leave in one batch',
    readBy: ['every process'],
  }),
  OTEL_SDK_DISABLED: setting(z.string().optional(), {
    doc: '`true` turns tracing off whatever else is set',
    readBy: ['every process'],
  }),
});
