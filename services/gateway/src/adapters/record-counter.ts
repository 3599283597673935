const QUOTE = 0x22;
const NEWLINE = 0x0a;

/**
 * Counts the records of a CSV (with its header line) or JSON Lines file fed in pieces as it is written. A
 * CSV newline inside a quoted field is not a record's end; a doubled quote inside one closes and reopens
 * it, which leaves the count right. Jumps between quotes and newlines with indexOf rather than looking at
 * every byte in JavaScript.
 */
export class RecordCounter {
  private inQuote = false;
  private lines = 0;

  constructor(private readonly format: 'csv' | 'jsonl') {}

  get records(): number {
    return this.format === 'csv' ? Math.max(0, this.lines - 1) : this.lines;
  }

  feed(buf: Uint8Array): void {
    const len = buf.length;
    if (this.format === 'jsonl') {
      for (let n = buf.indexOf(NEWLINE); n >= 0; n = buf.indexOf(NEWLINE, n + 1)) this.lines++;
      return;
    }
    let i = 0;
    while (i < len) {
      if (this.inQuote) {
        const close = buf.indexOf(QUOTE, i);
        if (close < 0) return;
        this.inQuote = false;
        i = close + 1;
        continue;
      }
      const quote = buf.indexOf(QUOTE, i);
      const end = quote < 0 ? len : quote;
      const part = buf.subarray(i, end);
      for (let n = part.indexOf(NEWLINE); n >= 0; n = part.indexOf(NEWLINE, n + 1)) this.lines++;
      if (quote < 0) return;
      this.inQuote = true;
      i = quote + 1;
    }
  }
}
