import { AppError } from '@quarry/errors';
import type { DeliveryFiles, RecordFileConverter } from '../ports/delivery-files.port';
import type { SearchExports } from '../ports/search-exports.port';
import type { Caller } from '../ports/service-clients.port';
import { DeliveryOutputs } from './delivery-outputs';
import { SignedLinks } from './signed-links';

/** Files in a Map: what was written, read and removed. */
function memoryFiles() {
  const kept = new Map<string, Buffer>();
  let n = 0;
  const files: DeliveryFiles = {
    reserve: (ext) => {
      const id = (++n).toString(16).padStart(32, '0');
      return { id, path: `/x/${id}.${ext}` };
    },
    pathOf: (id, ext) => `/x/${id}.${ext}`,
    size: async (id, ext) => kept.get(`${id}.${ext}`)?.length ?? 0,
    read: async (id, ext) => kept.get(`${id}.${ext}`) ?? Buffer.alloc(0),
    write: async (id, ext, content) => void kept.set(`${id}.${ext}`, content),
    open: async () => undefined,
    remove: async (id, ext) => void kept.delete(`${id}.${ext}`),
    sweep: async () => undefined,
  };
  return { files, kept };
}

const caller: Caller = { userId: 'u1', userName: 'ann', admin: false, indexes: ['movies'], realms: [], scopes: [] };
const saved = { index: 'movies', query: '*', page: 1, pageSize: 5 };
const converter: RecordFileConverter = { toXlsx: async () => undefined, toJsonArray: async () => undefined };
const links = new SignedLinks(
  Buffer.from('k'.repeat(32)),
  () => 'https://q.example',
  () => 0,
);

function outputs(opts: { count?: number; fail?: boolean; links?: SignedLinks | undefined } = {}) {
  const { files, kept } = memoryFiles();
  const writes: string[] = [];
  const searches: SearchExports = {
    count: async () => opts.count ?? 3,
    write: async (_c, _r, format, path) => {
      writes.push(format);
      const id = path.slice(3, 35);
      await files.write(id, path.slice(36), Buffer.from('Title\r\nA\r\nB\r\nC\r\n'));
      // Part of the file is there when the engine fails.
      if (opts.fail) throw AppError.unavailable('query is away');
      return 3;
    },
  };
  const out = new DeliveryOutputs({
    files,
    converter,
    searches,
    links: 'links' in opts ? opts.links : links,
    maxRows: 10,
    attachmentMaxBytes: 20,
    linkTtlS: 60,
    now: () => 0,
  });
  return { out, kept, writes };
}

/** The schedule's owner token and report, which every link names. */
const grant = { tokenId: 'tok_owner', guid: '00000000-0000-4000-8000-00000000000a' };

describe('DeliveryOutputs', () => {
  it('a search under the bound is inline, its file gone once read', async () => {
    const { out, kept } = outputs();
    const got = await out.search(
      caller,
      saved,
      ['Title'],
      { name: 'R', index: 'movies' },
      'csv',
      { requestId: 'r' },
      grant,
    );
    expect(got).toEqual({ contentType: 'text/csv', data: 'Title\r\nA\r\nB\r\nC\r\n', rows: 3 });
    expect(kept.size).toBe(0);
  });

  it('over QUARRY_EXPORT_MAX_ROWS: refused naming format before anything is written', async () => {
    const { out, writes } = outputs({ count: 11 });
    const err = await out
      .search(caller, saved, [], { name: 'R', index: 'movies' }, 'csv', { requestId: 'r' }, grant)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).detail).toBe(
      'format: the search now matches 11 records, more than QUARRY_EXPORT_MAX_ROWS (10) a delivery may hold',
    );
    expect(writes).toEqual([]);
  });

  it('a write that fails leaves no file behind', async () => {
    const { out, kept, writes } = outputs({ fail: true });
    await expect(
      out.search(caller, saved, ['Title'], { name: 'R', index: 'movies' }, 'xlsx', { requestId: 'r' }, grant),
    ).rejects.toThrow('query is away');
    // The staged JSON Lines were written, then removed with the workbook's reservation.
    expect(writes).toEqual(['jsonl']);
    expect(kept.size).toBe(0);
  });

  it('an output over the bound is kept and linked; at the bound it is inline', async () => {
    const { out, kept } = outputs();
    expect(await out.bounded('R', 'csv', 'text/csv', 'x'.repeat(20), grant)).toEqual({
      contentType: 'text/csv',
      data: 'x'.repeat(20),
    });
    const big = await out.bounded('R', 'pdf', 'application/pdf', Buffer.alloc(21, 1).toString('base64'), grant);
    expect(big).toMatchObject({
      contentType: 'application/pdf',
      data: null,
      link: { bytes: 21, expiresAt: '1970-01-01T00:01:00.000Z' },
    });
    expect([...kept.values()]).toEqual([Buffer.alloc(21, 1)]);
    const token = big.link!.url.split('/exports/signed/')[1];
    expect(links.check(token)).toMatchObject({
      kind: 'ok',
      file: { ext: 'pdf', filename: 'R-1970-01-01-00-00.pdf', ...grant },
    });
  });

  it('without a link key an output over the bound fails, saying so, and its file goes', async () => {
    const { out, kept } = outputs({ links: undefined });
    await expect(out.bounded('R', 'csv', 'text/csv', 'x'.repeat(21), grant)).rejects.toThrow(
      /over QUARRY_ATTACHMENT_MAX_BYTES and no link key/,
    );
    await new Promise((r) => setImmediate(r));
    expect(kept.size).toBe(0);
  });
});
