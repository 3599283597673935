export { dockerAvailability, describeIf, describeWithDocker } from './docker';
