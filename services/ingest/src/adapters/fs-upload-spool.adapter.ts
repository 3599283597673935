import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { AppError } from '@quarry/errors';
import type { SourceFormat } from '../ports/index-loader.port';
import type { SpooledUpload, UploadSpool } from '../ports/upload-spool.port';

class TooLarge extends Error {}

/** Counts the bytes that pass and fails the pipeline at the first one past the limit. */
function byteLimit(maxBytes: number, counted: (n: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      total += chunk.length;
      counted(total);
      if (total > maxBytes) done(new TooLarge());
      else done(null, chunk);
    },
  });
}

/**
 * Uploads spooled to `<data dir>/tmp` (the loader's own spill folder, on the data volume), private to
 * this process's user. gzip is undone on the way in, and the limit counts what it inflates to: a small
 * body that inflates to terabytes stops at the limit.
 */
export class FsUploadSpool implements UploadSpool {
  constructor(private readonly dataDir: string) {}

  async receive(
    body: AsyncIterable<Uint8Array>,
    options: { format: SourceFormat; gzip: boolean; maxBytes: number; signal: AbortSignal },
  ): Promise<SpooledUpload> {
    const dir = path.join(this.dataDir, 'tmp');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `upload-${randomBytes(8).toString('hex')}.${options.format}`);
    const discard = async () => fs.promises.rm(file, { force: true });
    let bytes = 0;
    // Opened here, not by the write stream: a stream still opening its file when the pipeline failed would
    // create it after the discard, leaving a spooled body behind.
    const fd = fs.openSync(file, 'wx', 0o600);
    const stages = [
      Readable.from(body, { objectMode: false }),
      ...(options.gzip ? [zlib.createGunzip()] : []),
      byteLimit(options.maxBytes, (n) => (bytes = n)),
      fs.createWriteStream('', { fd, autoClose: true }),
    ] as const;
    try {
      await pipeline(stages, { signal: options.signal });
    } catch (err) {
      await discard();
      if (err instanceof TooLarge)
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The upload exceeds QUARRY_UPLOAD_MAX_MB (${Math.floor(options.maxBytes / 1_048_576)} MB${options.gzip ? ' once gzip is undone' : ''}); nothing was published`,
        );
      if (err instanceof AppError) throw err;
      if (options.signal.aborted)
        throw options.signal.reason instanceof AppError
          ? options.signal.reason
          : AppError.timeout('The upload was cancelled before its body arrived');
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code.startsWith('Z_'))
        throw AppError.invalid(`The body is not valid gzip (Content-Encoding: gzip): ${(err as Error).message}`);
      throw err;
    }
    return { file, bytes, discard };
  }
}
