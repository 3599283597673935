import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '@quarry/errors';

/** The file, at the top of the data directory, naming the search backend its indexes were loaded into. */
export const SEARCH_BACKEND_MARK = 'search-backend';

export type SearchBackendName = 'embedded' | 'typesense';
/** `load` marks an unmarked data directory; `serve` and `drop` only compare. */
export type SearchBackendUse = 'serve' | 'load' | 'drop';

const VERB: Record<SearchBackendUse, string> = {
  serve: 'searching them',
  load: 'loading into it',
  drop: 'dropping from it',
};

function readMark(dataDir: string): string | undefined {
  try {
    return fs.readFileSync(path.join(dataDir, SEARCH_BACKEND_MARK), 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Refuses a process whose search backend is not the one the data directory's indexes were loaded into.
 * The catalog and the snapshots are shared by the loader and every query process;
 * a load run with the embedded engine publishes versions Typesense never received (every search then
 * answers UNAVAILABLE), and a query process on the other engine searches data that is not there. The
 * first load writes the mark (the loader is the one writer of the data volume); every later load,
 * drop and query service start compares with it.
 */
export function checkSearchBackendMark(dataDir: string, backend: SearchBackendName, use: SearchBackendUse): void {
  const marked = readMark(dataDir);
  if (marked === undefined) {
    if (use === 'load') {
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(path.join(dataDir, SEARCH_BACKEND_MARK), `${backend}\n`);
    }
    return;
  }
  if (marked === backend) return;
  const file = path.join(dataDir, SEARCH_BACKEND_MARK);
  throw AppError.conflict(
    `The indexes in ${dataDir} were loaded into the ${marked} search backend (${file}), but this process has ` +
      `QUARRY_SEARCH_BACKEND=${backend}: refusing ${VERB[use]}. Set QUARRY_SEARCH_BACKEND=${marked} ` +
      `(with its settings), or to move to ${backend}, delete ${file} and load every index again.`,
  );
}
