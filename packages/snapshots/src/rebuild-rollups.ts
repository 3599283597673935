import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RollupDef } from '@quarry/metadata-store';
import { AppError } from '@quarry/errors';
import { attachableFile, writeAttachable } from './attachable-snapshot';
import { duckMessage } from './load/duck-run';
import { publishFile } from './load/publish-files';

/**
 * A published version's records under a new snapshot name with `rollups` built into its DuckDB file,
 * for a rollup added (or the last one dropped) between loads: published versions never change, so the
 * same records are published again. The Parquet file is linked, not copied, where the file system can.
 * Returns the new snapshot, relative to the data directory; nothing is left behind on failure.
 */
export async function rebuildWithRollups(
  dataDir: string,
  snapshot: string,
  fields: ReadonlyArray<{ name: string; type: string; grain?: string }>,
  rollups: RollupDef[],
): Promise<string> {
  const source = path.resolve(dataDir, snapshot);
  const dir = path.dirname(source);
  const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const final = path.join(dir, `${id}.parquet`);
  const tmp = `${final}.tmp`;
  const attachTmp = path.join(dir, `${id}.duckdb.tmp`);
  const spill = path.join(dataDir, 'tmp');
  fs.mkdirSync(spill, { recursive: true, mode: 0o700 });
  let ok = false;
  try {
    try {
      fs.linkSync(source, tmp);
    } catch {
      fs.copyFileSync(source, tmp);
    }
    if (rollups.length) {
      try {
        await writeAttachable(tmp, attachTmp, fields, spill, rollups);
      } catch (err) {
        throw AppError.invalid(`Building the rollups failed: ${duckMessage(err)}`);
      }
      publishFile(attachTmp, attachableFile(final));
    } else if (fs.existsSync(attachableFile(source))) {
      // Without rollups a large version keeps its DuckDB file: the same one, linked.
      try {
        fs.linkSync(attachableFile(source), attachableFile(final));
      } catch {
        fs.copyFileSync(attachableFile(source), attachableFile(final));
      }
    }
    publishFile(tmp, final);
    ok = true;
    return path.relative(dataDir, final);
  } finally {
    fs.rmSync(tmp, { force: true });
    fs.rmSync(attachTmp, { force: true });
    fs.rmSync(`${attachTmp}.wal`, { force: true });
    if (!ok) fs.rmSync(attachableFile(final), { force: true });
  }
}
