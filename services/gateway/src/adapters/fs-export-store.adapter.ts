import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { chmod, open, readdir, readFile, rename, rm, stat, statfs, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { ExportFormat } from '@quarry/contract';
import { EXPORT_ID_PATTERN } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportRecord, ExportStore, PartialFileWatch, WrittenSoFar } from '../ports/export-store.port';
import { ParquetPageCounter } from './parquet-page-counter';
import { RecordCounter } from './record-counter';

const EXTENSIONS: Record<ExportFormat, string> = {
  csv: 'csv',
  jsonl: 'jsonl',
  parquet: 'parquet',
  xlsx: 'xlsx',
  pdf: 'pdf',
};
const RUN_PATTERN = /^[0-9a-f]{1,32}$/;
const READ_CHUNK = 1 << 20;
/** A Parquet page header, statistics included, fits in it; the pages' bodies are never read. */
const HEADER_READ = 1 << 16;

/**
 * Exports in one folder (QUARRY_EXPORT_DIR, a volume every gateway and query service shares): `<id>.json`
 * the record, `<id>.<run>.part` a run's file while it is written, `<id>.<ext>` the finished file, all mode
 * 0600. A record is replaced by a rename, so a reader on another gateway never sees half of one, and a
 * finished file appears by a rename, so a download never sees half of one.
 */
export class FsExportStore implements ExportStore {
  constructor(private readonly dir: string) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  private named(id: string, ext: string): string {
    // The use cases check ids; this is the last line before a file name.
    if (!EXPORT_ID_PATTERN.test(id)) throw AppError.notFound('No such export');
    return path.join(this.dir, `${id}.${ext}`);
  }

  async create(record: ExportRecord): Promise<void> {
    await this.write(record);
  }

  async get(id: string): Promise<ExportRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.named(id, 'json'), 'utf8')) as ExportRecord;
    } catch {
      return undefined;
    }
  }

  async update(id: string, patch: Partial<ExportRecord>): Promise<ExportRecord> {
    const current = await this.get(id);
    if (!current) throw AppError.notFound('No such export');
    const next = { ...current, ...patch, id };
    await this.write(next);
    return next;
  }

  async list(): Promise<ExportRecord[]> {
    const names = (await readdir(this.dir)).filter((n) => n.endsWith('.json'));
    const records = await Promise.all(names.map((n) => this.get(n.slice(0, -'.json'.length))));
    return records.filter((r): r is ExportRecord => r !== undefined);
  }

  partialPath(id: string, run: string): string {
    if (!RUN_PATTERN.test(run)) throw new Error('an export run is named in hex');
    return this.named(id, `${run}.part`);
  }

  async writePartial(id: string, run: string, pieces: Iterable<string | Uint8Array>): Promise<void> {
    await pipeline(Readable.from(pieces), createWriteStream(this.partialPath(id, run), { mode: 0o600 }));
  }

  watch(id: string, run: string, format: ExportFormat, columns?: number): PartialFileWatch {
    const file = this.partialPath(id, run);
    if (format === 'parquet' && columns !== undefined) return parquetWatch(file, columns);
    const counter = format === 'csv' || format === 'jsonl' ? new RecordCounter(format) : undefined;
    let offset = 0;
    const buffer = Buffer.alloc(READ_CHUNK);
    return {
      read: (signal) =>
        readOpen(
          file,
          async (handle) => {
            if (!counter) return { bytes: (await handle.stat()).size, rows: undefined };
            while (!signal?.aborted) {
              const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, offset);
              if (bytesRead === 0) break;
              counter.feed(buffer.subarray(0, bytesRead));
              offset += bytesRead;
            }
            return { bytes: offset, rows: counter.records };
          },
          () => ({ bytes: offset, rows: counter?.records }),
        ),
    };
  }

  async discardPartial(id: string, run: string): Promise<void> {
    await rm(this.partialPath(id, run), { force: true });
  }

  async publish(id: string, run: string, format: ExportFormat): Promise<number> {
    const target = this.named(id, EXTENSIONS[format]);
    const partial = this.partialPath(id, run);
    await chmod(partial, 0o600);
    await rename(partial, target);
    return (await stat(target)).size;
  }

  async freeBytes(): Promise<number> {
    const fs = await statfs(this.dir);
    return fs.bavail * fs.bsize;
  }

  openFile(id: string, format: ExportFormat): NodeJS.ReadableStream {
    return createReadStream(this.named(id, EXTENSIONS[format]));
  }

  async remove(id: string, format: ExportFormat, record: boolean): Promise<void> {
    await rm(this.named(id, EXTENSIONS[format]), { force: true });
    const partials = (await readdir(this.dir)).filter((n) => n.startsWith(`${id}.`) && n.endsWith('.part'));
    await Promise.all(partials.map((n) => rm(path.join(this.dir, n), { force: true })));
    if (record) await rm(this.named(id, 'json'), { force: true });
  }

  private async write(record: ExportRecord): Promise<void> {
    const target = this.named(record.id, 'json');
    // Its own temporary name: two writers of one record at once (a sweep and a STATUS) never share one.
    const temp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
    await rename(temp, target);
  }
}

/** What `read` makes of the file while it is open; `missing` when it is not there (yet). */
async function readOpen(
  file: string,
  read: (handle: FileHandle) => Promise<WrittenSoFar>,
  missing: () => WrittenSoFar,
): Promise<WrittenSoFar> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch {
    return missing();
  }
  try {
    return await read(handle);
  } finally {
    await handle.close();
  }
}

/** A Parquet file being written: its rows counted from its page headers, which alone are read. */
function parquetWatch(file: string, columns: number): PartialFileWatch {
  const counter = new ParquetPageCounter(columns);
  const buffer = Buffer.alloc(HEADER_READ);
  let bytes = 0;
  return {
    read: (signal) =>
      readOpen(
        file,
        async (handle) => {
          bytes = (await handle.stat()).size;
          while (!signal?.aborted && !counter.done && counter.offset < bytes) {
            const { bytesRead } = await handle.read(buffer, 0, HEADER_READ, counter.offset);
            if (bytesRead === 0 || !counter.feed(buffer.subarray(0, bytesRead), bytes)) break;
          }
          return { bytes, rows: counter.rows };
        },
        () => ({ bytes, rows: counter.rows }),
      ),
  };
}
