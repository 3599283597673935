export {
  loadConfig,
  ConfigError,
  serviceAddr,
  serviceListenAddr,
  DEFAULT_SERVICE_PORTS,
  type Config,
  type ServiceName,
} from './load-config';
export { envSchema, KNOWN_ENV_VARS, TARGETS, type Target } from './config.schema';
export type { GrpcTlsFiles } from './config-files';
