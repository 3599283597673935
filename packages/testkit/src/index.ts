export { dockerAvailability, describeWithDocker } from './docker';
