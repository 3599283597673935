import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import zlib from 'node:zlib';
import type { RecordFileConverter, XlsxOptions } from '../ports/delivery-files.port';

/** Excel's rows per sheet, the header row included. */
const SHEET_ROWS = 1_048_576;
const CELL_TEXT_MAX = 32_767;

/**
 * One file, appended to in order, with backpressure: memory holds a chunk, never the file. A wait for the
 * disk ends when `signal` aborts (a full or slow volume never holds a cancelled run).
 */
class Sink {
  offset = 0;
  constructor(
    private readonly out: WriteStream,
    private readonly signal?: AbortSignal,
  ) {}
  async write(chunk: Buffer): Promise<void> {
    this.signal?.throwIfAborted();
    this.offset += chunk.length;
    if (!this.out.write(chunk)) await once(this.out, 'drain', this.signal ? { signal: this.signal } : {});
  }
  async end(): Promise<void> {
    this.out.end();
    await once(this.out, 'close');
  }
  /** Stops writing at once, whatever failed before: what was written is left for the caller to remove. */
  async destroy(): Promise<void> {
    if (this.out.closed) return;
    await new Promise<void>((resolve) => {
      this.out.once('close', () => resolve());
      // A write that failed already told its caller; a late one is of no interest now.
      this.out.on('error', () => undefined);
      this.out.destroy();
    });
  }
}

interface Entry {
  name: Buffer;
  offset: number;
  crc: number;
  compressed: number;
  size: number;
}

/**
 * A ZIP archive (PKWARE APPNOTE 4.3) written as a stream: each entry deflated as it comes, its CRC and
 * sizes in a data descriptor after it (flag bit 3), the central directory at the end. No ZIP64: an entry
 * (one sheet of at most 1,048,576 rows) stays under 4 GB.
 */
class ZipWriter {
  private readonly entries: Entry[] = [];
  constructor(
    private readonly sink: Sink,
    private readonly signal?: AbortSignal,
  ) {}

  async add(name: string, pieces: AsyncIterable<string> | Iterable<string>): Promise<void> {
    const entry: Entry = { name: Buffer.from(name, 'utf8'), offset: this.sink.offset, crc: 0, compressed: 0, size: 0 };
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(0x0808, 6); // data descriptor follows; UTF-8 names
    head.writeUInt16LE(8, 8); // deflate
    head.writeUInt16LE(0, 10);
    head.writeUInt16LE(0x21, 12); // 1980-01-01
    head.writeUInt16LE(entry.name.length, 26);
    await this.sink.write(Buffer.concat([head, entry.name]));
    const deflate = zlib.createDeflateRaw();
    const drained = (async () => {
      for await (const chunk of deflate as AsyncIterable<Buffer>) {
        entry.compressed += chunk.length;
        await this.sink.write(chunk);
      }
    })();
    // Awaited below; a failure while the pieces are still being fed is the pieces' loop's to report.
    drained.catch(() => undefined);
    try {
      for await (const piece of pieces) {
        const bytes = Buffer.from(piece, 'utf8');
        entry.crc = zlib.crc32(bytes, entry.crc);
        entry.size += bytes.length;
        if (!deflate.write(bytes))
          await Promise.race([once(deflate, 'drain', this.signal ? { signal: this.signal } : {}), drained]);
      }
    } catch (err) {
      // Nothing more reaches the file once this rejects: the compressed output still in flight is dropped.
      deflate.destroy();
      await drained.catch(() => undefined);
      throw err;
    }
    deflate.end();
    await drained;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(entry.crc >>> 0, 4);
    descriptor.writeUInt32LE(entry.compressed, 8);
    descriptor.writeUInt32LE(entry.size, 12);
    await this.sink.write(descriptor);
    this.entries.push(entry);
  }

  async finish(): Promise<void> {
    const start = this.sink.offset;
    for (const e of this.entries) {
      const c = Buffer.alloc(46);
      c.writeUInt32LE(0x02014b50, 0);
      c.writeUInt16LE(20, 4);
      c.writeUInt16LE(20, 6);
      c.writeUInt16LE(0x0808, 8);
      c.writeUInt16LE(8, 10);
      c.writeUInt16LE(0, 12);
      c.writeUInt16LE(0x21, 14);
      c.writeUInt32LE(e.crc >>> 0, 16);
      c.writeUInt32LE(e.compressed, 20);
      c.writeUInt32LE(e.size, 24);
      c.writeUInt16LE(e.name.length, 28);
      c.writeUInt32LE(e.offset, 42);
      await this.sink.write(Buffer.concat([c, e.name]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.sink.offset - start, 12);
    end.writeUInt32LE(start, 16);
    await this.sink.write(end);
  }
}

/** XML text: escaped, without the control characters XML 1.0 cannot hold, cut to a cell's limit. */
function xmlText(s: string): string {
  return (
    s
      .slice(0, CELL_TEXT_MAX)
      // eslint-disable-next-line no-control-regex -- these are the characters XML 1.0 forbids
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c)
  );
}

/** A column's letters (A, …, Z, AA, …), from 0. */
function columnName(i: number): string {
  let name = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** A cell as OOXML writes it (ECMA-376 Part 1, 18.3.1.4): numbers and booleans typed, text inline; none when empty. */
function cell(ref: string, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? `<c r="${ref}"><v>${v}</v></c>` : '';
  if (typeof v === 'boolean') return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`;
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${xmlText(text)}</t></is></c>`;
}

/** A row numbered from 1, its cells with their references (readers such as ExcelJS want both). */
function row(n: number, columns: readonly string[], values: readonly unknown[]): string {
  return `<row r="${n}">${values.map((v, i) => cell(`${columns[i]}${n}`, v)).join('')}</row>`;
}

const SHEET_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData>';
const SHEET_TAIL = '</sheetData></worksheet>';

function workbookParts(sheets: string[]): Array<[string, string]> {
  const xml = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const types = sheets
    .map(
      (_, i) =>
        `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
    )
    .join('');
  return [
    [
      '[Content_Types].xml',
      `${xml}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>${types}</Types>`,
    ],
    [
      '_rels/.rels',
      `${xml}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ],
    [
      'xl/workbook.xml',
      `${xml}<workbook xmlns="${main}" xmlns:r="${rel}"><sheets>${sheets.map((name, i) => `<sheet name="${xmlText(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `${xml}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${rel}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('')}<Relationship Id="rId${sheets.length + 1}" Type="${rel}/styles" Target="styles.xml"/></Relationships>`,
    ],
    [
      'xl/styles.xml',
      `${xml}<styleSheet xmlns="${main}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="1"><xf/></cellXfs></styleSheet>`,
    ],
  ];
}

/** A sheet's name: at most 31 characters, none of : \ / ? * [ ]. */
function sheetName(base: string, n: number): string {
  const clean = base.replace(/[:\\/?*[\]]/g, '_').slice(0, 24) || 'records';
  return n === 1 ? clean : `${clean} (${n})`;
}

/**
 * Converts an export's JSON Lines as a stream: memory holds one record and one compressed chunk. A
 * conversion whose signal aborts (its export cancelled, failed or handed back by a stopping server) stops
 * before its next row, closes both files and removes the workbook it had begun.
 */
export class StreamingRecordConverter implements RecordFileConverter {
  /** `sheetRows`: rows per sheet, the header included (Excel's limit; smaller in tests). */
  constructor(private readonly sheetRows = SHEET_ROWS) {}

  async toXlsx(
    jsonlPath: string,
    xlsxPath: string,
    fields: readonly string[],
    base: string,
    { rows, signal }: XlsxOptions = {},
  ): Promise<void> {
    signal?.throwIfAborted();
    const sink = new Sink(createWriteStream(xlsxPath, { mode: 0o600 }), signal);
    const input = createReadStream(jsonlPath);
    const reader = createInterface({ input, crlfDelay: Infinity });
    try {
      await this.writeWorkbook(reader[Symbol.asyncIterator](), sink, fields, base, { rows, signal });
      await sink.end();
    } catch (err) {
      reader.close();
      input.destroy();
      await sink.destroy();
      await rm(xlsxPath, { force: true }).catch(() => undefined);
      // A wait that the abort ended rejects with an AbortError of its own: the caller hears the reason.
      throw signal?.aborted ? signal.reason : err;
    }
  }

  private async writeWorkbook(
    lines: AsyncIterator<string>,
    sink: Sink,
    fields: readonly string[],
    base: string,
    { rows, signal }: XlsxOptions,
  ): Promise<void> {
    const zip = new ZipWriter(sink, signal);
    const nextLine = async (): Promise<string | undefined> => {
      for (;;) {
        const next = await lines.next();
        signal?.throwIfAborted();
        if (next.done) return undefined;
        if (next.value.trim() !== '') return next.value;
      }
    };
    const sheets: string[] = [];
    // One line ahead, so a sheet is begun only for records still to come (an empty search: one header).
    let pending = await nextLine();
    const sheetRows = this.sheetRows;
    const columns = fields.map((_, i) => columnName(i));
    let written = 0;
    while (pending !== undefined || sheets.length === 0) {
      sheets.push(sheetName(base, sheets.length + 1));
      const sheet = async function* () {
        yield SHEET_HEAD;
        yield row(1, columns, fields);
        for (let n = 2; n <= sheetRows && pending !== undefined; n++) {
          const record = JSON.parse(pending) as Record<string, unknown>;
          yield row(
            n,
            columns,
            fields.map((f) => record[f]),
          );
          rows?.(++written);
          pending = await nextLine();
        }
        yield SHEET_TAIL;
      };
      await zip.add(`xl/worksheets/sheet${sheets.length}.xml`, sheet());
    }
    for (const [name, text] of workbookParts(sheets)) await zip.add(name, [text]);
    await zip.finish();
  }

  async toJsonArray(jsonlPath: string, jsonPath: string): Promise<void> {
    const sink = new Sink(createWriteStream(jsonPath, { mode: 0o600 }));
    let first = true;
    await sink.write(Buffer.from('['));
    for await (const line of createInterface({ input: createReadStream(jsonlPath), crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      await sink.write(Buffer.from(`${first ? '\n' : ',\n'}${line}`, 'utf8'));
      first = false;
    }
    await sink.write(Buffer.from('\n]\n'));
    await sink.end();
  }
}
