import fs from 'node:fs';
import path from 'node:path';
import { buildSnapshot, pruneSnapshots } from '@quarry/snapshots';
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

  sizeOf(snapshot: string): number {
    try {
      return fs.statSync(path.resolve(this.dataDir, snapshot)).size;
    } catch {
      return 0;
    }
  }
}
