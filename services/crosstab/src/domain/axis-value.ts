export const BLANK = '(blank)';

/** An axis value as the engine returns it: text, number, boolean or a day (YYYY-MM-DD), or null for blank. */
export type AxisValue = string | number | boolean | null;

/**
 * One aggregated group. How long its keys are says what it is: the full row and column keys are a cell,
 * an empty column key the Total column, an empty row key the Total row, shorter keys a subtotal.
 */
export interface GroupRow {
  rowKey: AxisValue[];
  columnKey: AxisValue[];
  values: Array<number | null>;
  /** The group is of the Other row (column): its rowKey (columnKey) is [] and stands for every omitted value. */
  rowOther?: true;
  columnOther?: true;
}

/**
 * Locale-free number text for display: 15 significant digits, every digit a loaded decimal can hold
 * (±999999999999.99 stays itself), while the float noise of sums (18774.999999999996) does not show.
 */
export function formatNumber(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return '';
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(15)));
}

/** A number as text with every digit the double holds (the shortest text that reads back as the same number). */
export function exactNumber(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return '';
  return String(n);
}

/** Texts that read as the blank key's label, quoted or not: `(blank)`, `"(blank)"`, `""(blank)""`, … */
const LOOKS_BLANK = /^("*)\(blank\)\1$/;

/**
 * A key as a label. The blank key reads (blank); a value that is itself that text gets one more pair of
 * quotes, so no two keys share a label (the literal "(blank)" reads `"(blank)"`).
 */
export function axisLabel(v: AxisValue): string {
  if (v === null || v === '') return BLANK;
  if (typeof v === 'number') return formatNumber(v);
  const text = String(v);
  return LOOKS_BLANK.test(text) ? `"${text}"` : text;
}

/** A key as a person reads it: a bin as its interval `[30, 60)`, anything else as its label. */
export function axisText(axis: { bin?: { width: number; origin: number } }, v: AxisValue): string {
  if (axis.bin && typeof v === 'number') return `[${formatNumber(v)}, ${formatNumber(v + axis.bin.width)})`;
  return axisLabel(v);
}
