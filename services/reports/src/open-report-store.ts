import { sqliteFile } from '@quarry/metadata-store';
import type { ReportStore } from './ports/report-store.port';

/**
 * MongoDB when configured, else the embedded SQLite file the metadata store uses. Each driver loads only
 * when chosen, so importing `@quarry/reports` loads neither (the CLI's report commands stay quick).
 */
export async function openReportStore(settings: {
  dataDir: string;
  mongo: { url: string; db: string } | undefined;
}): Promise<ReportStore> {
  if (settings.mongo) {
    const { MongoReportStore } = await import('./adapters/mongo-report-store.adapter.js');
    return MongoReportStore.connect(settings.mongo.url, settings.mongo.db);
  }
  const { SqliteReportStore } = await import('./adapters/sqlite-report-store.adapter.js');
  return new SqliteReportStore(sqliteFile(settings.dataDir));
}
