import fs from 'node:fs';
import path from 'node:path';
import type { RunStaging } from '../ports/run-staging.port';

/** Staged files of source runs in one folder of the data directory (QUARRY_DATA_DIR/ingest/staging). */
export class FsRunStaging implements RunStaging {
  constructor(private readonly dir: string) {}

  place(runId: string): { file: string; discard(): void } {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${runId}.staged`);
    return { file, discard: () => fs.rmSync(file, { force: true }) };
  }
}
