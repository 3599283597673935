/**
 * Counts the rows of a Parquet file while it is written, before its footer (the only place that says how
 * many rows it holds) exists. The file is "PAR1", then each row group's column chunks one after another,
 * each a run of pages, each page a Thrift compact-protocol PageHeader followed by its compressed bytes
 * (Apache Parquet format, parquet.thrift). A flat column's data pages hold one value per row, nulls
 * included, so the values of every data page on disk, divided by the columns, are the rows written (a
 * row group under way counts the share of it whose columns are down). Reading stops for good at anything
 * that is not a page header: the footer, once the writer finishes.
 */
export class ParquetPageCounter {
  /** Where the next page header starts. */
  private next = 4;
  private values = 0;
  private ended = false;

  constructor(private readonly columns: number) {}

  get rows(): number {
    return this.columns > 0 ? Math.floor(this.values / this.columns) : 0;
  }

  /** The file offset to read from next; what is read there goes to `feed`. */
  get offset(): number {
    return this.next;
  }

  get done(): boolean {
    return this.ended;
  }

  /**
   * Reads the page headers in `buf` (the file's bytes from `offset`, `fileSize` the file's size now) and
   * counts each page whose bytes are all on disk. Answers whether it moved on; when it did not, the next
   * header is not wholly in `buf` yet.
   */
  feed(buf: Uint8Array, fileSize: number): boolean {
    if (this.ended) return false;
    const start = this.next;
    let at = 0;
    for (;;) {
      let page: PageHeader | undefined;
      try {
        page = readPageHeader(buf, at);
      } catch (err) {
        if (err instanceof ShortRead) break;
        this.ended = true;
        break;
      }
      if (!page) {
        this.ended = true;
        break;
      }
      const end = this.next + (page.headerBytes + page.compressedBytes);
      if (end > fileSize) break;
      this.values += page.values;
      at += page.headerBytes + page.compressedBytes;
      this.next = end;
      if (at >= buf.length) break;
    }
    return this.next > start;
  }
}

class ShortRead extends Error {}

interface PageHeader {
  headerBytes: number;
  compressedBytes: number;
  /** Values of a data page (v1 or v2); 0 for a dictionary or index page. */
  values: number;
}

/** Thrift compact protocol types (THRIFT-110). */
const T = {
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
};
const DATA_PAGE = 0;
const DATA_PAGE_V2 = 3;

class Reader {
  constructor(
    private readonly buf: Uint8Array,
    public pos: number,
  ) {}

  byte(): number {
    if (this.pos >= this.buf.length) throw new ShortRead();
    return this.buf[this.pos++];
  }

  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    throw new Error('varint too long');
  }

  zigzag(): number {
    const n = this.varint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  skip(n: number): void {
    if (this.pos + n > this.buf.length) throw new ShortRead();
    this.pos += n;
  }

  /** Skips a value of `type`, nested ones included. */
  skipValue(type: number, depth = 0): void {
    if (depth > 16) throw new Error('nested too deep');
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        return;
      case T.BYTE:
        return this.skip(1);
      case T.I16:
      case T.I32:
      case T.I64:
        this.varint();
        return;
      case T.DOUBLE:
        return this.skip(8);
      case T.BINARY:
        return this.skip(this.varint());
      case T.LIST:
      case T.SET: {
        const head = this.byte();
        const size = head >> 4 === 15 ? this.varint() : head >> 4;
        for (let i = 0; i < size; i++) this.skipValue(head & 0x0f, depth + 1);
        return;
      }
      case T.MAP: {
        const size = this.varint();
        if (size === 0) return;
        const kinds = this.byte();
        for (let i = 0; i < size; i++) {
          this.skipValue(kinds >> 4, depth + 1);
          this.skipValue(kinds & 0x0f, depth + 1);
        }
        return;
      }
      case T.STRUCT:
        this.struct(() => false, depth + 1);
        return;
      default:
        throw new Error(`not a Thrift type: ${type}`);
    }
  }

  /** Reads a struct's fields, handing each to `field` (which reads it and answers true) or skipping it. */
  struct(field: (id: number, type: number) => boolean, depth = 0): void {
    let last = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return;
      const type = head & 0x0f;
      const delta = head >> 4;
      const id = delta === 0 ? this.zigzag() : last + delta;
      last = id;
      if (type === T.TRUE || type === T.FALSE || !field(id, type)) this.skipValue(type, depth);
    }
  }
}

/**
 * A PageHeader at `at`, or undefined when the bytes there are not one (the footer's FileMetaData holds a
 * list where a page header holds its sizes). Throws ShortRead when `buf` ends inside it.
 */
function readPageHeader(buf: Uint8Array, at: number): PageHeader | undefined {
  const r = new Reader(buf, at);
  let type = -1;
  let compressed = -1;
  let uncompressed = -1;
  let values = 0;
  let wrong = false;
  const i32 = (t: number): number => {
    if (t !== T.I32) {
      wrong = true;
      r.skipValue(t);
      return -1;
    }
    return r.zigzag();
  };
  r.struct((id, t) => {
    if (id === 1) type = i32(t);
    else if (id === 2) uncompressed = i32(t);
    else if (id === 3) compressed = i32(t);
    else if ((id === 5 || id === 8) && t === T.STRUCT)
      // data_page_header and data_page_header_v2: num_values is their field 1.
      r.struct((inner, it) => {
        if (inner !== 1) return false;
        values = i32(it);
        return true;
      }, 1);
    else return false;
    return true;
  });
  if (wrong || type < 0 || type > DATA_PAGE_V2 || compressed < 0 || uncompressed < 0 || values < 0) return undefined;
  return {
    headerBytes: r.pos - at,
    compressedBytes: compressed,
    values: type === DATA_PAGE || type === DATA_PAGE_V2 ? values : 0,
  };
}
