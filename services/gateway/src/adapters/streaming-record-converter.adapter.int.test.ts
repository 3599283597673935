import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as XLSX from 'xlsx';
import { StreamingRecordConverter } from './streaming-record-converter.adapter';

/** The workbook read back by SheetJS, a reader written apart from this writer. */
function sheets(file: string): Record<string, unknown[][]> {
  const book = XLSX.read(fs.readFileSync(file), { type: 'buffer' });
  return Object.fromEntries(
    book.SheetNames.map((n) => [n, XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[n], { header: 1, defval: null })]),
  );
}

describe('StreamingRecordConverter', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-convert-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const records = [
    { title: 'Heat', gross: 67436818, good: true, rating: 'R', tags: ['a'] },
    { title: '<b>&"quoted"</b>\u0001', gross: -1.5, good: false, rating: null },
    { title: '=HYPERLINK("http://x")', gross: 0, rating: 'PG' },
    { title: 'Ünïcødé ✓', gross: 1e21, good: null, rating: 'G' },
    { title: 'last', gross: 3, good: true, rating: 'PG-13' },
  ];
  const fields = ['title', 'gross', 'good', 'rating', 'tags'];
  const write = (name: string, rows: unknown[]) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return file;
  };
  const expected = records.map((r) =>
    fields.map((f) => {
      const v = (r as Record<string, unknown>)[f];
      if (v === undefined || v === null) return null;
      if (Array.isArray(v)) return JSON.stringify(v);
      return typeof v === 'string' ? v.split('\u0001').join('') : v;
    }),
  );

  it('writes every record under one header row, typed (numbers, booleans, text as given, no formula run)', async () => {
    const src = write('a.jsonl', records);
    const out = path.join(dir, 'a.xlsx');
    await new StreamingRecordConverter().toXlsx(src, out, fields, 'movies');
    expect(sheets(out)).toEqual({ movies: [fields, ...expected] });
  });

  it('starts a new sheet when one is full, each with its header; no empty sheet after an exact fill', async () => {
    const src = write('b.jsonl', records.slice(0, 4));
    const out = path.join(dir, 'b.xlsx');
    // Three rows a sheet: the header and two records.
    await new StreamingRecordConverter(3).toXlsx(src, out, fields, 'movies');
    expect(sheets(out)).toEqual({
      movies: [fields, ...expected.slice(0, 2)],
      'movies (2)': [fields, ...expected.slice(2, 4)],
    });
  });

  it('columns past Z are named AA, AB, … (each cell referenced where it belongs)', async () => {
    const wide = Array.from({ length: 30 }, (_, i) => `f${i}`);
    const record = Object.fromEntries(wide.map((f, i) => [f, i % 3 === 0 ? null : i]));
    const out = path.join(dir, 'w.xlsx');
    await new StreamingRecordConverter().toXlsx(write('w.jsonl', [record]), out, wide, 'w');
    expect(sheets(out)).toEqual({ w: [wide, wide.map((f) => record[f])] });
    const book = XLSX.read(fs.readFileSync(out), { type: 'buffer' });
    expect(book.Sheets.w.AD2?.v).toBe(29);
  });

  it('an empty search is one sheet with its header', async () => {
    const out = path.join(dir, 'c.xlsx');
    await new StreamingRecordConverter().toXlsx(write('c.jsonl', []), out, ['a', 'b'], 'x/y:z');
    expect(sheets(out)).toEqual({ x_y_z: [['a', 'b']] });
  });

  describe('stopped by its signal', () => {
    const many = (name: string, n: number) => {
      const file = path.join(dir, name);
      const line = (i: number) => `${JSON.stringify({ title: `film ${i}`, gross: i, good: i % 2 === 0 })}\n`;
      fs.writeFileSync(file, Array.from({ length: n }, (_, i) => line(i)).join(''));
      return file;
    };

    it('stops before its next row, rejects with the reason and removes the workbook it had begun', async () => {
      const total = 300_000;
      const src = many('big.jsonl', total);
      const out = path.join(dir, 'big.xlsx');
      const controller = new AbortController();
      const reason = new Error('the server is stopping');
      let heard = 0;
      let atAbort = -1;
      const converting = new StreamingRecordConverter().toXlsx(src, out, fields, 'big', {
        signal: controller.signal,
        rows: (n) => {
          heard = n;
          // Well into the first sheet: the workbook exists and has rows in it.
          if (n === 50_000) {
            expect(fs.existsSync(out)).toBe(true);
            atAbort = n;
            controller.abort(reason);
          }
        },
      });
      await expect(converting).rejects.toBe(reason);
      expect(atAbort).toBe(50_000);
      // Not one row after the abort, and nothing written later either.
      expect(heard).toBe(atAbort);
      await new Promise((r) => setTimeout(r, 100));
      expect(heard).toBe(atAbort);
      expect(fs.existsSync(out)).toBe(false);
      // The source is the caller's: left as it was.
      expect(fs.statSync(src).size).toBeGreaterThan(0);
    });

    it("an abort on a sheet's last row ends it before the next sheet", async () => {
      const src = many('sheets.jsonl', 20);
      const out = path.join(dir, 'sheets.xlsx');
      const controller = new AbortController();
      let heard = 0;
      // Five records a sheet: the abort lands on the first sheet's last record.
      const converting = new StreamingRecordConverter(6).toXlsx(src, out, fields, 's', {
        signal: controller.signal,
        rows: (n) => {
          heard = n;
          if (n === 5) controller.abort(new Error('cancelled'));
        },
      });
      await expect(converting).rejects.toThrow('cancelled');
      expect(heard).toBe(5);
      expect(fs.existsSync(out)).toBe(false);
    });

    it('an already aborted signal writes nothing', async () => {
      const out = path.join(dir, 'never.xlsx');
      const controller = new AbortController();
      controller.abort(new Error('too late'));
      await expect(
        new StreamingRecordConverter().toXlsx(write('n.jsonl', records), out, fields, 'n', {
          signal: controller.signal,
        }),
      ).rejects.toThrow('too late');
      expect(fs.existsSync(out)).toBe(false);
    });

    it('a record that is not JSON fails the conversion and removes the workbook', async () => {
      const src = path.join(dir, 'bad.jsonl');
      fs.writeFileSync(src, `${JSON.stringify(records[0])}\n{"title": "cut\n`);
      const out = path.join(dir, 'bad.xlsx');
      await expect(new StreamingRecordConverter().toXlsx(src, out, fields, 'bad')).rejects.toThrow(SyntaxError);
      expect(fs.existsSync(out)).toBe(false);
    });
  });

  it('JSON Lines become one JSON array', async () => {
    const out = path.join(dir, 'd.json');
    await new StreamingRecordConverter().toJsonArray(write('d.jsonl', records), out);
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual(records);
    await new StreamingRecordConverter().toJsonArray(write('e.jsonl', []), out);
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual([]);
  });
});
