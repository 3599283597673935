export {
  loadConfig,
  ConfigError,
  serviceAddr,
  serviceListenAddr,
  DEFAULT_SERVICE_PORTS,
  type Config,
  type ServiceName,
} from './load-config';
export {
  envSchema,
  envShape,
  SETTING_GROUPS,
  EMPTY_REFUSED,
  KNOWN_ENV_VARS,
  PIVOT_ENGINES,
  SEARCH_BACKENDS,
  TARGETS,
  type PivotEngineName,
  type SearchBackend,
  type Target,
} from './config.schema';
export type { GrpcTlsFiles } from './config-files';
export {
  OTLP_PROTOCOLS,
  SAMPLERS,
  type OtlpProtocol,
  type SamplerName,
  type TracingSettings,
} from './tracing-settings';
export {
  DATA_DIR_KEYS,
  KeyFileError,
  loadDataDirKey,
  MIN_KEY_CHARS,
  requireDataDirKey,
  type DataDirKey,
  type DataDirKeySpec,
} from './data-dir-key';
export { settingDocs, type Reader, type SettingDoc } from './setting';
export { settingDoc, settingsTables } from './settings-table';
export { pickConfig } from './pick-config';
