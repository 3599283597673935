import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse } from 'csv-parse/sync';
import type { FieldType } from '@quarry/query-language';
import { buildSnapshot } from '@quarry/snapshots';

/*
 * What the tests of the source readers check a staged file with: a CSV parser reading it back, and
 * Quarry's own loader loading it with the types the reader declared (timestamp as the loader's date).
 */

/** The staged CSV's header and records, as a CSV parser reads them (every value text). */
export function readStagedCsv(file: string): { header: string[]; records: string[][] } {
  const all = parse(fs.readFileSync(file), { relax_column_count: false }) as string[][];
  return { header: all[0] ?? [], records: all.slice(1) };
}

/** Records keyed by the header's names. */
export function stagedObjects(file: string): Array<Record<string, string>> {
  const { header, records } = readStagedCsv(file);
  return records.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}

/** The loader's declared types for a read's columns: a timestamp is a date; no type, no declaration. */
export function declaredTypes(columns: Array<{ name: string; type?: string }>): Record<string, FieldType> {
  const out: Record<string, FieldType> = {};
  for (const c of columns) {
    if (!c.type) continue;
    out[c.name] = (c.type === 'timestamp' ? 'date' : c.type) as FieldType;
  }
  return out;
}

/**
 * Loads the staged file with Quarry's loader (its declared types as the reader gives them) and reads the
 * stored values back as text: what an index built from the source holds.
 */
export async function loadStaged(
  file: string,
  columns: Array<{ name: string; type?: string }>,
): Promise<{ fields: Array<{ name: string; type: string }>; rows: Array<Record<string, string | null>> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-staged-'));
  try {
    const built = await buildSnapshot({
      name: 'staged',
      file,
      dataDir,
      types: declaredTypes(columns),
      views: [],
      format: 'csv',
      attachMinRecords: Infinity,
    });
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    try {
      const list = built.fields.map(
        (f) => `CAST("${f.name.replace(/"/g, '""')}" AS VARCHAR) AS "${f.name.replace(/"/g, '""')}"`,
      );
      const reader = await c.runAndReadAll(
        `SELECT ${list.join(', ')} FROM read_parquet('${path.join(dataDir, built.snapshot).replace(/'/g, "''")}')`,
      );
      return {
        fields: built.fields.map((f) => ({ name: f.name, type: f.type })),
        rows: reader.getRowObjectsJS() as Array<Record<string, string | null>>,
      };
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
