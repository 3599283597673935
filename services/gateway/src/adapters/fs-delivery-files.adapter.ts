import { createReadStream, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { chmod, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@quarry/errors';
import type { DeliveryFiles } from '../ports/delivery-files.port';

const ID = /^[0-9a-f]{32}$/;
const EXT = /^[a-z]{2,8}$/;
/** Every delivery file ends so: the exports' own files in the same folder (`<id>.json` records) never do. */
const SUFFIX = '.dlv';

/**
 * Delivery files in the exports' folder (the one folder the query service writes an export to), named
 * `dlv-<id>.<ext>.dlv`, mode 0600.
 */
export class FsDeliveryFiles implements DeliveryFiles {
  constructor(private readonly dir: string) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  reserve(ext: string): { id: string; path: string } {
    const id = randomBytes(16).toString('hex');
    return { id, path: this.pathOf(id, ext) };
  }

  pathOf(id: string, ext: string): string {
    // The last line before a file name: the id and extension have the form this store gives them.
    if (!ID.test(id) || !EXT.test(ext)) throw AppError.notFound('No such file');
    return path.join(this.dir, `dlv-${id}.${ext}${SUFFIX}`);
  }

  async size(id: string, ext: string): Promise<number> {
    return (await stat(this.pathOf(id, ext))).size;
  }

  read(id: string, ext: string): Promise<Buffer> {
    return readFile(this.pathOf(id, ext));
  }

  async write(id: string, ext: string, content: Buffer): Promise<void> {
    await writeFile(this.pathOf(id, ext), content, { mode: 0o600 });
  }

  async open(id: string, ext: string): Promise<{ bytes: number; stream: NodeJS.ReadableStream } | undefined> {
    const file = this.pathOf(id, ext);
    try {
      const { size } = await stat(file);
      // Written by the query service as its own user: restricted to this process's user once linked.
      await chmod(file, 0o600).catch(() => undefined);
      return { bytes: size, stream: createReadStream(file) };
    } catch {
      return undefined;
    }
  }

  async remove(id: string, ext: string): Promise<void> {
    await rm(this.pathOf(id, ext), { force: true });
  }

  async sweep(ms: number): Promise<void> {
    const cutoff = Date.now() - ms;
    for (const name of await readdir(this.dir)) {
      if (!name.startsWith('dlv-') || !name.endsWith(SUFFIX)) continue;
      const file = path.join(this.dir, name);
      const s = await stat(file).catch(() => undefined);
      if (s && s.mtimeMs < cutoff) await rm(file, { force: true });
    }
  }
}
