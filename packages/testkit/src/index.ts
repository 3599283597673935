export { dockerAvailability, describeIf, describeWithDocker } from './docker';
export { makeTlsFixtures, tlsTarget, type TlsFixtures } from './tls-fixtures';
export { KIND, OtlpReceiver, type ReceivedSpan } from './otlp-receiver';
export { builtEntry } from './built-entry';
export {
  healthClient,
  healthStatus,
  observeWarming,
  WARM_BEFORE_READY,
  type HealthClient,
  type WarmingSeen,
} from './warm-readiness';
export { inspectPng, type PngFacts } from './png-inspector';
export { fastest, fastestSync, leastOf, settled, type Timed } from './timing';
export * from './bm25-oracle';
