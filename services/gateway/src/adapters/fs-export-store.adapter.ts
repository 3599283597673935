import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { chmod, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExportFormat } from '@quarry/contract';
import { EXPORT_ID_PATTERN } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportRecord, ExportStore } from '../ports/export-store.port';

const EXTENSIONS: Record<ExportFormat, string> = { csv: 'csv', jsonl: 'jsonl', parquet: 'parquet', xlsx: 'xlsx' };

/**
 * Exports under `<data dir>/exports/`: `<id>.json` the record, `<id>.<ext>` the file, both mode 0600.
 * A record is replaced by a rename, so a reader on another gateway never sees half of one.
 */
export class FsExportStore implements ExportStore {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'exports');
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

  filePath(id: string, format: ExportFormat): string {
    return this.named(id, EXTENSIONS[format]);
  }

  async fileSize(id: string, format: ExportFormat): Promise<number> {
    try {
      return (await stat(this.filePath(id, format))).size;
    } catch {
      return 0;
    }
  }

  async writeFile(id: string, format: ExportFormat, pieces: Iterable<string | Uint8Array>): Promise<void> {
    await pipeline(Readable.from(pieces), createWriteStream(this.filePath(id, format), { mode: 0o600 }));
  }

  async seal(id: string, format: ExportFormat): Promise<void> {
    await chmod(this.filePath(id, format), 0o600);
  }

  openFile(id: string, format: ExportFormat): NodeJS.ReadableStream {
    return createReadStream(this.filePath(id, format));
  }

  async remove(id: string, format: ExportFormat, record: boolean): Promise<void> {
    await rm(this.filePath(id, format), { force: true });
    if (record) await rm(this.named(id, 'json'), { force: true });
  }

  private async write(record: ExportRecord): Promise<void> {
    const target = this.named(record.id, 'json');
    const temp = `${target}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
    await rename(temp, target);
  }
}
