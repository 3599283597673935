import { tracingSuite } from './support/tracing-suite';

/**
 * The same trace across the split deployment: gateway, query, crosstab, chart, reports and chart-worker
 * each in its own process, exporting with the default encoding (http/protobuf). The trace context crosses
 * process boundaries in gRPC metadata and in the BullMQ job's data.
 */
describe('traces (split processes, OTLP http/protobuf by default)', () => {
  tracingSuite({
    topology: 'split',
    protocol: undefined,
    services: {
      gateway: 'quarry-gateway',
      crosstab: 'quarry-crosstab',
      chart: 'quarry-chart',
      worker: 'quarry-chart-worker',
    },
  });
});
