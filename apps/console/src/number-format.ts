/*
 * Numbers as the reader's locale writes them (Intl.NumberFormat): thousands separators, at most two
 * decimals for display; the exact value stays in the cell's title and in JSON, CSV and XLSX.
 */
const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

export function formatNumber(value: number): string {
  return NUMBER.format(value);
}

/** The server's locale-free number (`14994348159`, `-3.5`, `12.5%`) or undefined when the text is none. */
export function parseServerNumber(text: string): { value: number; percent: boolean } | undefined {
  const m = /^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)(%?)$/i.exec(text.trim());
  return m ? { value: Number(m[1]), percent: m[2] === '%' } : undefined;
}

/** A server cell's text in the reader's format: `14,994,348,159`, `12.5%`; other text as it is. */
export function formatServerCell(text: string): string {
  const n = parseServerNumber(text);
  if (!n) return text;
  return n.percent ? `${formatNumber(n.value)}%` : formatNumber(n.value);
}

export const isNumericType = (type: string | undefined) => type === 'integer' || type === 'number';
