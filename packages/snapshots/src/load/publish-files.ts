import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RollupDef } from '@quarry/metadata-store';
import type { FieldDef } from '@quarry/query-language';
import { AppError } from '@quarry/errors';
import { attachableFile, writeAttachable } from '../attachable-snapshot';
import { duckMessage } from './duck-run';

/**
 * Moves a finished file into place so that it survives a power cut once the catalog names it: the
 * data is flushed before the rename, and the folder (which records the new name) after it.
 */
export function publishFile(tmp: string, final: string): void {
  const fd = fs.openSync(tmp, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, final);
  const dir = fs.openSync(path.dirname(final), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * The SHA-256 (hex) of a version's records file, read once as it is written: what `meta.provenance.snapshot`
 * names, so an auditor can tell the very bytes an answer came from (sha256sum of the file says the same).
 */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * A large version's attachable form is written from the finished Parquet file and published before
 * it, so a catalog entry never names a Parquet file whose attachable form is half written.
 */
export async function publishAttachable(
  parquet: string,
  records: number,
  fields: FieldDef[],
  at: { minRecords: number; tmp: string; final: string; spill: string; label: string; rollups?: RollupDef[] },
): Promise<void> {
  // Rollups live in the DuckDB file: an index with any has one at every size.
  if (records < at.minRecords && !at.rollups?.length) return;
  try {
    await writeAttachable(parquet, at.tmp, fields, at.spill, at.rollups);
  } catch (err) {
    throw AppError.invalid(`Loading ${at.label} failed writing its attachable snapshot: ${duckMessage(err)}`);
  }
  publishFile(at.tmp, attachableFile(at.final));
}
