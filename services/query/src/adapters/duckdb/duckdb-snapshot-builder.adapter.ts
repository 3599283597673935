import fs from 'node:fs';
import path from 'node:path';
import type { RollupDef } from '@quarry/metadata-store';
import type { FieldDef } from '@quarry/query-language';
import { attachableFile, buildSnapshot, pruneSnapshots, rebuildWithRollups } from '@quarry/snapshots';
import type { BuiltSnapshotInfo, SnapshotBuildInput, SnapshotBuilder } from '../../ports/snapshot-builder.port';

/** Snapshots as DuckDB files under the data directory (@quarry/snapshots does the building). */
export class DuckDbSnapshotBuilder implements SnapshotBuilder {
  constructor(private readonly dataDir: string) {}

  build(input: SnapshotBuildInput): Promise<BuiltSnapshotInfo> {
    return buildSnapshot({ ...input, dataDir: this.dataDir });
  }

  rejectsFile(name: string, version: number): string {
    return path.join(this.dataDir, 'rejects', `${name}-v${version}.jsonl`);
  }

  prune(name: string, keep: readonly string[]): void {
    pruneSnapshots(this.dataDir, name, [...keep]);
  }

  /** A version's bytes: its Parquet file and, for a large one, its attachable DuckDB file beside it. */
  sizeOf(snapshot: string): number {
    const size = (file: string) => {
      try {
        return fs.statSync(path.resolve(this.dataDir, file)).size;
      } catch {
        return 0;
      }
    };
    return size(snapshot) + (size(snapshot) > 0 ? size(attachableFile(snapshot)) : 0);
  }

  withRollups(snapshot: string, fields: FieldDef[], rollups: RollupDef[]): Promise<string> {
    return rebuildWithRollups(this.dataDir, snapshot, fields, rollups);
  }
}
