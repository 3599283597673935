export { dockerAvailability, describeIf, describeWithDocker } from './docker';
export { makeTlsFixtures, type TlsFixtures } from './tls-fixtures';
export { KIND, OtlpReceiver, type ReceivedSpan } from './otlp-receiver';
export { builtEntry } from './built-entry';
