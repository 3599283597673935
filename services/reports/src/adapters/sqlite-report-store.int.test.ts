import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportStoreConformance } from '../report-store.conformance';
import { SqliteReportStore } from './sqlite-report-store.adapter';

describe('SqliteReportStore conformance', () => {
  reportStoreConformance(
    async () => new SqliteReportStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-reports-')), 'quarry.db')),
  );
});
