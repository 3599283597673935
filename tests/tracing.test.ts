import { tracingSuite } from './support/tracing-suite';

/** OpenTelemetry traces of `quarry serve` all-in-one (gateway and services on two threads), over http/json. */
describe('traces (QUARRY_TARGET=all, OTLP http/json)', () => {
  tracingSuite({
    topology: 'all',
    protocol: 'http/json',
    services: { gateway: 'quarry', crosstab: 'quarry', chart: 'quarry', worker: 'quarry' },
  });
});
