import { sqliteFile } from '@quarry/metadata-store';
import { MongoReportStore } from './adapters/mongo-report-store.adapter';
import { SqliteReportStore } from './adapters/sqlite-report-store.adapter';
import type { ReportStore } from './ports/report-store.port';

/** MongoDB when configured, else the embedded SQLite file the metadata store uses. */
export async function openReportStore(settings: {
  dataDir: string;
  mongo: { url: string; db: string } | undefined;
}): Promise<ReportStore> {
  if (settings.mongo) return MongoReportStore.connect(settings.mongo.url, settings.mongo.db);
  return new SqliteReportStore(sqliteFile(settings.dataDir));
}
