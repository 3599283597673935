export { dockerAvailability, describeIf, describeWithDocker } from './docker';
export { makeTlsFixtures, type TlsFixtures } from './tls-fixtures';
