export * from './domain/identity';
export * from './domain/api-token';
export type { MetadataStore } from './ports/metadata-store.port';
export { SqliteMetadataStore } from './adapters/sqlite-metadata-store.adapter';
export { MongoMetadataStore } from './adapters/mongo-metadata-store.adapter';
export { openMetadataStore, sqliteFile, type MetadataStoreSettings } from './open-metadata-store';
