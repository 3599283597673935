import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { AppError } from '@quarry/errors';
import { FsUploadSpool } from './fs-upload-spool.adapter';

const MB = 1_048_576;

/** Yields `data` in pieces of `size` bytes, counting how many pieces were pulled. */
function pieces(data: Buffer, size: number) {
  const seen = { pulled: 0, total: Math.ceil(data.length / size) };
  async function* gen(): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < data.length; at += size) {
      seen.pulled += 1;
      yield data.subarray(at, at + size);
    }
  }
  return { body: gen(), seen };
}

describe('FsUploadSpool on a real directory', () => {
  let dataDir: string;
  const tmp = () => path.join(dataDir, 'tmp');
  // Read at once after the rejection: the spool opens its file before the body flows, so nothing can
  // create it after the discard.
  const leftOver = async () => (fs.existsSync(tmp()) ? fs.readdirSync(tmp()) : []);
  const options = (over: Partial<Parameters<FsUploadSpool['receive']>[1]> = {}) => ({
    format: 'csv' as const,
    gzip: false,
    maxBytes: 4 * MB,
    signal: new AbortController().signal,
    ...over,
  });

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-spool-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('writes a plain body whole, piece after piece, into <dataDir>/tmp, private to this user', async () => {
    const text = Buffer.from(Array.from({ length: 5000 }, (_, i) => `${i},row ${i}\n`).join(''));
    const spooled = await new FsUploadSpool(dataDir).receive(pieces(text, 777).body, options({ format: 'jsonl' }));
    expect(path.dirname(spooled.file)).toBe(tmp());
    expect(path.basename(spooled.file)).toMatch(/^upload-[0-9a-f]{16}\.jsonl$/);
    expect(fs.readFileSync(spooled.file).equals(text)).toBe(true);
    expect(spooled.bytes).toBe(text.length);
    // Uploads may hold anyone's data: only the service's own user reads them.
    expect(fs.statSync(spooled.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(tmp()).mode & 0o777).toBe(0o700);
    await spooled.discard();
    expect(await leftOver()).toEqual([]);
    // Discarding twice is safe (the use case discards in a finally, whatever happened before).
    await expect(spooled.discard()).resolves.toBeUndefined();
  });

  it('gives two uploads two files', async () => {
    const spool = new FsUploadSpool(dataDir);
    const a = await spool.receive(pieces(Buffer.from('a\n'), 1).body, options());
    const b = await spool.receive(pieces(Buffer.from('b\n'), 1).body, options());
    expect(a.file).not.toBe(b.file);
    expect(fs.readFileSync(a.file, 'utf8')).toBe('a\n');
    expect(fs.readFileSync(b.file, 'utf8')).toBe('b\n');
  });

  it('inflates a gzip body and counts the bytes it inflated to', async () => {
    const text = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `{"id":${i}}\n`).join(''));
    const gz = zlib.gzipSync(text);
    expect(gz.length).toBeLessThan(text.length / 2);
    const spooled = await new FsUploadSpool(dataDir).receive(pieces(gz, 1000).body, options({ gzip: true }));
    expect(fs.readFileSync(spooled.file).equals(text)).toBe(true);
    expect(spooled.bytes).toBe(text.length);
  });

  it('takes a body of exactly maxBytes', async () => {
    const body = Buffer.alloc(MB, 0x61);
    const spooled = await new FsUploadSpool(dataDir).receive(pieces(body, 64 * 1024).body, options({ maxBytes: MB }));
    expect(spooled.bytes).toBe(MB);
    expect(fs.statSync(spooled.file).size).toBe(MB);
  });

  it('refuses a body past maxBytes with PAYLOAD_TOO_LARGE and leaves no file', async () => {
    const body = Buffer.alloc(MB + 1, 0x61);
    const err = await new FsUploadSpool(dataDir)
      .receive(pieces(body, 64 * 1024).body, options({ maxBytes: MB }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      detail: 'The upload exceeds QUARRY_UPLOAD_MAX_MB (1 MB); nothing was published',
    });
    expect(await leftOver()).toEqual([]);
  });

  it('stops a gzip bomb at the limit it inflates past, early, and leaves no file', async () => {
    // 50 MB of zeros gzips to ~50 KB: the limit must count what it inflates to, not what arrived.
    const bomb = zlib.gzipSync(Buffer.alloc(50 * MB));
    expect(bomb.length).toBeLessThan(MB / 4);
    const { body, seen } = pieces(bomb, 64);
    const err = await new FsUploadSpool(dataDir)
      .receive(body, options({ gzip: true, maxBytes: MB }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      detail: 'The upload exceeds QUARRY_UPLOAD_MAX_MB (1 MB once gzip is undone); nothing was published',
    });
    expect(await leftOver()).toEqual([]);
    // 1 MB of the 50 inflated is ~2 % of the body; read-ahead buffers add some, but the source is left
    // mostly unread rather than inflated to the end and refused afterwards.
    expect(seen.pulled).toBeLessThan(seen.total / 2);
  });

  it.each([
    ['not gzip at all', Buffer.from('id,name\n1,plain text sent as gzip\n')],
    ['cut short', zlib.gzipSync(Buffer.from('x'.repeat(100_000) + 'y'.repeat(100_000))).subarray(0, 200)],
  ])('refuses a body that is %s with INVALID_ARGUMENT naming gzip, and leaves no file', async (_what, data) => {
    const err = await new FsUploadSpool(dataDir)
      .receive(pieces(data, 50).body, options({ gzip: true }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringMatching(/^The body is not valid gzip \(Content-Encoding: gzip\): .+/) as unknown,
    });
    expect(await leftOver()).toEqual([]);
  });

  it('stops at an aborted signal with its AppError reason and leaves no file', async () => {
    const controller = new AbortController();
    const reason = AppError.timeout('The client went away before the upload was answered');
    // A body that keeps coming until the caller goes away, as a gRPC call's messages do.
    async function* endless(): AsyncGenerator<Uint8Array> {
      for (let i = 0; !controller.signal.aborted; i++) {
        if (i === 20) controller.abort(reason);
        yield Buffer.alloc(1024, 0x62);
        await new Promise((r) => setImmediate(r));
      }
    }
    const err = await new FsUploadSpool(dataDir)
      .receive(endless(), options({ signal: controller.signal }))
      .catch((e: unknown) => e);
    expect(err).toBe(reason);
    expect(await leftOver()).toEqual([]);
  });

  it('says TIMEOUT for a signal aborted without an AppError reason, and leaves no file', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await new FsUploadSpool(dataDir)
      .receive(pieces(Buffer.from('a,b\n'), 1).body, options({ signal: controller.signal }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'TIMEOUT', detail: 'The upload was cancelled before its body arrived' });
    expect(await leftOver()).toEqual([]);
  });

  it('rejects with the very AppError the body threw, after some of it was written, and leaves no file', async () => {
    const thrown = new AppError(
      'PAYLOAD_TOO_LARGE',
      'The upload exceeds QUARRY_UPLOAD_MAX_MB (4 MB); nothing was published',
    );
    async function* failing(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 50; i++) yield Buffer.alloc(16 * 1024, 0x63);
      throw thrown;
    }
    const err = await new FsUploadSpool(dataDir).receive(failing(), options()).catch((e: unknown) => e);
    expect(err).toBe(thrown);
    expect(await leftOver()).toEqual([]);
  });
});
