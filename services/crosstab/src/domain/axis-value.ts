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
}

/** Locale-free number text without float noise (12 significant digits at most). */
export function formatNumber(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return '';
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(12)));
}

export function axisLabel(v: AxisValue): string {
  if (v === null || v === '') return BLANK;
  if (typeof v === 'number') return formatNumber(v);
  return String(v);
}

/** A key as a person reads it: a bin as its interval `[30, 60)`, anything else as its label. */
export function axisText(axis: { bin?: { width: number; origin: number } }, v: AxisValue): string {
  if (axis.bin && typeof v === 'number') return `[${formatNumber(v)}, ${formatNumber(v + axis.bin.width)})`;
  return axisLabel(v);
}
