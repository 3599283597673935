import fs from 'node:fs';

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/** File lines (from 1) found for the asked units and records. */
export interface FoundLines {
  /** By the reader's own line number. */
  units: Map<number, number>;
  /** By position among the records the reader kept. */
  records: Map<number, number>;
}

/**
 * The line of a CSV or JSON Lines file that each of some rows starts on, so that every problem a load
 * reports names the line an editor shows. The readers count differently: DuckDB's CSV reader numbers
 * "lines" as records and blank lines, a quoted value spanning lines counting once (`units`), and the
 * type checks only know a row's position among the rows the reader kept (`records`: the header, blank
 * lines and rejected rows not counted). For JSON Lines a unit is a line.
 *
 * `rejected` maps the unit of each rejected row to how many lines the reader took for it: more than one
 * when an unterminated quote swallowed the lines after it (they are skipped as the reader skipped them,
 * without reading quotes), else 1 (walked, quotes and all, but not counted as kept). CSV quotes are `"`
 * doubled to escape, as the loader reads them; only `"` and line feeds matter, so any delimiter and both
 * encodings the loader takes walk alike.
 *
 * One pass over the file, made only when a load has something to report, ending at the last row asked.
 */
export function findLines(
  file: string,
  kind: 'csv' | 'jsonl',
  want: { units?: readonly number[]; records?: readonly number[] },
  rejected: ReadonlyMap<number, number>,
): FoundLines {
  const units = new Set(want.units ?? []);
  const records = new Set(want.records ?? []);
  const found: FoundLines = { units: new Map(), records: new Map() };
  let unitsLeft = units.size;
  let recordsLeft = records.size;
  if (unitsLeft + recordsLeft === 0) return found;
  let line = 1;
  let unit = 0;
  let inRecord = false;
  let inQuote = false;
  let skipUntil = 0;
  let headerSeen = kind !== 'csv';
  let kept = 0;
  const startUnit = () => {
    unit += 1;
    if (units.has(unit)) {
      found.units.set(unit, line);
      unitsLeft -= 1;
    }
  };
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 16);
    let first = true;
    for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null)) {
      let i = 0;
      if (first) {
        first = false;
        if (n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
      }
      for (; i < n; i++) {
        const b = buf[i];
        if (line < skipUntil) {
          if (b === LF) line += 1;
          continue;
        }
        if (!inRecord) {
          if (b === CR || (kind === 'jsonl' && (b === 0x20 || b === 0x09))) continue;
          if (b === LF) {
            // A blank line: a unit to the reader, no record.
            startUnit();
            line += 1;
            continue;
          }
          startUnit();
          const span = rejected.get(unit);
          if (span !== undefined && span > 1) {
            skipUntil = line + span;
            continue;
          }
          inRecord = true;
          if (!headerSeen) headerSeen = true;
          else if (span === undefined) {
            kept += 1;
            if (records.has(kept)) {
              found.records.set(kept, line);
              recordsLeft -= 1;
            }
          }
          if (unitsLeft + recordsLeft === 0) return found;
        }
        if (b === QUOTE && kind === 'csv') inQuote = !inQuote;
        else if (b === LF) {
          line += 1;
          if (!inQuote) inRecord = false;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return found;
}
