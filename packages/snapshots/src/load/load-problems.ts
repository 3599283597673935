import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '@quarry/errors';

/**
 * One row a load could not take, in Quarry's words: where it is, which column when it can be known, why,
 * and the raw text. A rejects file holds one of these per line. A CSV or JSON Lines row is always named
 * by `line` (the line of the file it starts on, whichever check refused it); `record` (its position
 * among the records, from 1) names a row only where the file has no lines to point at (Parquet, or an
 * element of a JSON array, which also gives the `line` it starts on).
 */
export interface RejectedRow {
  line?: number;
  record?: number;
  column?: string;
  reason: string;
  text: string;
}

/** How a load treats a malformed row: `fail` (the default) publishes nothing; `skip` keeps the rest. */
export type OnError = 'fail' | 'skip';

/**
 * A load's accounting as it goes, for a caller that must answer even when the load fails (an upload's
 * problem+json carries it): the builder fills it in place, so what it holds after a throw is how far
 * the load got.
 */
export interface LoadReport {
  /** Rows read from the source, once known (a load that fails while reading never knows). */
  rowsRead?: number;
  rejected: number;
  /** The first REPORTED_REJECTS rejected rows, their text clipped to REPORTED_TEXT characters. */
  rejects: RejectedRow[];
}

/** An answer lists this many rejected rows; the rejects file holds them all. */
export const REPORTED_REJECTS = 100;
/** A reported row's text: enough to recognise it in an answer that lists a hundred. */
const REPORTED_TEXT = 200;

/** Raw text kept in a rejects file or a message: enough to find the row, never a megabyte. */
const MAX_TEXT = 2000;

export function clipText(text: string, max = MAX_TEXT): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `flights.csv:12, column "delay": reason` */
export function describeRejected(file: string, r: RejectedRow): string {
  const where = r.line !== undefined ? `${file}:${r.line}` : `${file}, record ${r.record ?? '?'}`;
  return `${where}${r.column !== undefined ? `, column "${r.column}"` : ''}: ${r.reason}`;
}

/**
 * Collects the rows a load rejects: in `fail` mode the first one ends the load (nothing is published);
 * in `skip` mode each goes to the rejects file until more than `maxErrors` arrive. Each is also
 * counted in `report` (and listed there while it holds fewer than REPORTED_REJECTS) before a failure
 * is thrown, so the report of a failed load names the row that failed it.
 */
export class RejectLog {
  private count = 0;
  private first: RejectedRow | undefined;
  private fd: number | undefined;
  private readonly lines = new Map<number, number>();

  constructor(
    private readonly file: string,
    private readonly onError: OnError,
    private readonly maxErrors: number,
    /** Where skipped rows are written (`rejects/<index>-v<N>.jsonl`); created on the first one. */
    readonly rejectsFile: string | undefined,
    readonly report: LoadReport = { rejected: 0, rejects: [] },
  ) {
    // A report reused from an earlier load would add this load's rows to that one's.
    report.rejected = 0;
    report.rejects.length = 0;
    delete report.rowsRead;
  }

  get rejected(): number {
    return this.count;
  }

  /** The lines rejected rows start on (each taking one line: how JSON Lines are checked). */
  get rejectedLines(): ReadonlyMap<number, number> {
    return this.lines;
  }

  add(r: RejectedRow): void {
    this.count += 1;
    if (r.line !== undefined && r.record === undefined) this.lines.set(r.line, 1);
    this.first ??= r;
    this.report.rejected = this.count;
    if (this.report.rejects.length < REPORTED_REJECTS) {
      this.report.rejects.push({ ...r, text: clipText(r.text, REPORTED_TEXT) });
    }
    if (this.onError === 'fail') throw this.failure();
    if (this.count > this.maxErrors) throw this.failure();
    if (this.rejectsFile) {
      if (this.fd === undefined) {
        fs.mkdirSync(path.dirname(this.rejectsFile), { recursive: true, mode: 0o700 });
        this.fd = fs.openSync(this.rejectsFile, 'w', 0o600);
      }
      fs.writeSync(this.fd, `${JSON.stringify({ ...r, text: clipText(r.text) })}\n`);
    }
  }

  /** The error a load ends with: the first malformed row, and how many there were when it stopped. */
  failure(): AppError {
    const first = this.first ? describeRejected(this.file, this.first) : this.file;
    if (this.onError === 'fail') {
      return AppError.invalid(
        `${first}. Nothing was published; fix the file, or load with --on-error skip to publish the other rows and list the rejected ones`,
      );
    }
    return AppError.invalid(
      `More than ${this.maxErrors} rows rejected (--max-errors ${this.maxErrors}); the first: ${first}. Nothing was published`,
    );
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /** A load that failed leaves no rejects file behind: the rows it names were never part of a version. */
  discard(): void {
    this.close();
    if (this.rejectsFile) fs.rmSync(this.rejectsFile, { force: true });
  }
}
