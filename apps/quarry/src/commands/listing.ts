/** A list as the CLI prints it: a header line naming the columns, then one tab-separated line per row. */
export function listing(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return [header, ...rows].map((cells) => cells.join('\t')).join('\n');
}
