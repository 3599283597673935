export * from './domain/identity';
export * from './domain/api-token';
export type { MetadataStore } from './ports/metadata-store.port';
export type { AuditEntry, AuditLog, AuditQuery, CrosstabShape } from './ports/audit-log.port';
export type {
  IndexCatalog,
  IndexEntry,
  IndexOrigin,
  IndexPublication,
  LoadLock,
  LoadLockHolder,
  RollupDef,
  RollupTotal,
} from './ports/index-catalog.port';
export {
  openMetadataStore,
  sqliteFile,
  type MetadataStoreSettings,
  type MetadataAndCatalog,
} from './open-metadata-store';
