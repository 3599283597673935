import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The least a signing key may hold: the same floor the variables that configure one have. */
export const MIN_KEY_CHARS = 32;

/** A signing key that is configured, or else kept in the data directory and shared by its processes. */
export interface DataDirKeySpec {
  /** The variable that configures it (QUARRY_CURSOR_SECRET): named in problems. */
  variable: string;
  /** Its value, from the variable or its _FILE (already validated by the schema); unset: the data dir's. */
  configured: string | undefined;
  dataDir: string;
  /** The key file's name in the data directory (cursor.secret). */
  file: string;
  /** Mode of the data directory when this makes it (the embed key's folder is private to its owner). */
  dirMode?: number;
}

/**
 * The keys kept this way. The cursor and embed keys stop their process when the data directory cannot
 * keep one; the webhook key leaves webhooks off instead (services/scheduler).
 */
export const DATA_DIR_KEYS = {
  /** Signs pagination cursors (query and reports services). */
  cursor: { variable: 'QUARRY_CURSOR_SECRET', file: 'cursor.secret' },
  /** Signs embed tokens (gateway); its folder is private to its owner. */
  embed: { variable: 'QUARRY_EMBED_SECRET', file: 'embed.secret', dirMode: 0o700 },
  /** Derives each schedule's webhook signing secret (scheduler, beside the gateway). */
  webhook: { variable: 'QUARRY_WEBHOOK_KEY', file: 'webhook.key' },
  /** Signs the links a delivery sends in place of a large attachment (gateway). */
  link: { variable: 'QUARRY_LINK_KEY', file: 'link.key' },
  /** Encrypts sources' passwords (ingest); its folder is private to its owner. */
  source: { variable: 'QUARRY_SOURCE_KEY', file: 'source.key', dirMode: 0o700 },
} as const satisfies Record<string, Omit<DataDirKeySpec, 'configured' | 'dataDir'>>;

export type DataDirKey =
  | { key: Buffer; source: 'configured' | 'data-dir' }
  /** No key is configured and none is kept, and the data directory cannot keep one (read-only). */
  | { key: undefined; reason: string };

/** A key file that is there but cannot serve: refused at start rather than signing with it. */
export class KeyFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyFileError';
  }
}

/**
 * The key: the configured value, else the one kept in the data directory, else a new random one written
 * there. Processes sharing the directory race to write it: the key is written whole to a file of this
 * process's own and linked into place, so the first link wins and no reader ever sees a half-written key.
 * A key file that exists but is empty, too short or unreadable throws KeyFileError (a key made anew would
 * silently void every cursor or token signed with the old one). A data directory that cannot keep a new
 * key answers `{ key: undefined }`, each caller deciding whether that stops it.
 */
export function loadDataDirKey(spec: DataDirKeySpec): DataDirKey {
  if (spec.configured) return { key: Buffer.from(spec.configured, 'utf8'), source: 'configured' };
  const file = path.join(spec.dataDir, spec.file);
  const kept = readKeyFile(spec, file);
  if (kept) return { key: kept, source: 'data-dir' };
  try {
    fs.mkdirSync(spec.dataDir, { recursive: true, ...(spec.dirMode === undefined ? {} : { mode: spec.dirMode }) });
    writeOnce(file, randomBytes(32).toString('hex'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return {
      key: undefined,
      reason: `${spec.variable} is not set and the data directory ${spec.dataDir} cannot keep a key (${code})`,
    };
  }
  const made = readKeyFile(spec, file);
  if (!made) throw new KeyFileError(`${file} vanished as it was made`);
  return { key: made, source: 'data-dir' };
}

/** loadDataDirKey for a key the process cannot run without: a data directory that cannot keep one throws. */
export function requireDataDirKey(spec: DataDirKeySpec): Buffer {
  const loaded = loadDataDirKey(spec);
  if (loaded.key === undefined)
    throw new KeyFileError(`${loaded.reason}; set ${spec.variable} or ${spec.variable}_FILE`);
  return loaded.key;
}

/** The kept key, or undefined when there is no file yet. */
function readKeyFile(spec: DataDirKeySpec, file: string): Buffer | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT') return undefined;
    throw new KeyFileError(`cannot read ${file} (${code}); fix it, or set ${spec.variable}`);
  }
  // Written with a trailing newline by hand or by echo; the key is what is on the line.
  const key = text.trim();
  if (key.length < MIN_KEY_CHARS) {
    throw new KeyFileError(
      `${file} holds ${key.length === 0 ? 'no key' : `a key shorter than ${MIN_KEY_CHARS} characters`}; ` +
        `remove it to have a new one made (what it signed stops being valid), or set ${spec.variable}`,
    );
  }
  return Buffer.from(key, 'utf8');
}

/** Writes `file` unless it exists, atomically: a reader sees no file or the whole key. */
function writeOnce(file: string, key: string): void {
  const staging = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(staging, key, { flag: 'wx', mode: 0o600 });
  try {
    fs.linkSync(staging, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    // A file system without hard links: an exclusive create, which a racing reader may see empty for an instant.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
      try {
        fs.writeFileSync(file, key, { flag: 'wx', mode: 0o600 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      return;
    }
    throw err;
  } finally {
    fs.rmSync(staging, { force: true });
  }
}
