import path from 'node:path';
import type { AuditLog } from './ports/audit-log.port';
import type { IndexCatalog } from './ports/index-catalog.port';
import type { MetadataStore } from './ports/metadata-store.port';

/** Both adapters serve users, tokens, the index catalog and the audit trail from one store. */
export type MetadataAndCatalog = MetadataStore & IndexCatalog & AuditLog;

export interface MetadataStoreSettings {
  dataDir: string;
  mongo: { url: string; db: string } | undefined;
}

export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, 'quarry.db');
}

/** MongoDB when configured, else the embedded SQLite file under the data directory. */
export async function openMetadataStore(settings: MetadataStoreSettings): Promise<MetadataAndCatalog> {
  // Each driver loads only when chosen: the CLI's short commands should not pay for the MongoDB client.
  if (settings.mongo) {
    const { MongoMetadataStore } = await import('./adapters/mongo-metadata-store.adapter.js');
    return MongoMetadataStore.connect(settings.mongo.url, settings.mongo.db);
  }
  const { SqliteMetadataStore } = await import('./adapters/sqlite-metadata-store.adapter.js');
  return new SqliteMetadataStore(sqliteFile(settings.dataDir));
}
