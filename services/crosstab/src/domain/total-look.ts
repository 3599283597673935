import { FORMAT_LOCALE, intlOptions, type TotalFormat, type TotalLook } from '@quarry/contract';
import { formatNumber } from './axis-value';
import { displayOf, type TotalSpec } from './crosstab-spec';
import { passes, type PivotTable } from './pivot-table';
import type { AxisValue } from './axis-value';

/*
 * A total's format and colours as each output writes them. Values are the shown values (after showAs):
 * a percentage of something is out of 100, which a percent format writes as such.
 */

/** A share as a reader takes it in: two decimals at most (12.5%, 33.33%); JSON and CSV keep every digit. */
const plainPercent = (v: number) => `${formatNumber(Number(v.toFixed(2)))}%`;

/** The text of a value in HTML (and so PDF): the total's format, or the plain locale-free number. */
export function textFormatter(t: TotalSpec): (v: number) => string {
  const percent = displayOf(t).percent;
  if (!t.look?.format) return percent ? plainPercent : formatNumber;
  const format = t.look.format;
  const options = intlOptions(percent ? { ...format, style: 'percent' } : format);
  const intl = new Intl.NumberFormat(FORMAT_LOCALE, options);
  return percent ? (v) => intl.format(v / 100) : (v) => intl.format(v);
}

/**
 * Excel writes `0` for a digit it keeps and `#` for one it may drop, but cannot drop the decimal point:
 * where Intl may write no decimals at all, Excel keeps one.
 */
function digits(min: number, max: number): string {
  if (max <= 0) return '';
  const kept = Math.max(min, 1);
  return `.${'0'.repeat(kept)}${'#'.repeat(Math.max(0, max - kept))}`;
}

/** Text Excel prints as it is, in quotes (a quote inside doubled is not allowed: dropped). */
const quoted = (s: string) => (s.trim() === '' ? s : `"${s.replace(/"/g, '')}"`);

/**
 * The Excel number format of a total's format: the same digits, percent sign, currency symbol or unit
 * around the number. Compact notation becomes thousands and millions sections (Excel has two
 * conditions at most); numbers below a thousand and negative ones are written in full.
 */
export function excelFormat(f: TotalFormat, percentShown: boolean): string {
  const options = intlOptions(percentShown ? { ...f, style: 'percent' } : f);
  const intl = new Intl.NumberFormat(FORMAT_LOCALE, options);
  const resolved = intl.resolvedOptions();
  const frac = digits(resolved.minimumFractionDigits ?? 0, resolved.maximumFractionDigits ?? 0);
  let before = '';
  let after = '';
  if (options.style === 'currency' || options.style === 'unit') {
    // Where the symbol or unit stands, as Intl writes it for this locale.
    const parts = new Intl.NumberFormat(FORMAT_LOCALE, { ...options, notation: 'standard' }).formatToParts(1);
    const n = parts.findIndex((p) => p.type === 'integer');
    before = parts
      .slice(0, n)
      .map((p) => p.value)
      .join('');
    after = parts
      .slice(n + 1)
      .filter((p) => p.type !== 'fraction' && p.type !== 'decimal')
      .map((p) => p.value)
      .join('');
  }
  if (options.style === 'percent') return `#,##0${frac}%`;
  const body = (scale: string, suffix: string) => `${quoted(before)}#,##0${frac}${scale}${quoted(suffix + after)}`;
  if (options.notation === 'compact') {
    const compactFrac = frac === '' ? '.0' : frac;
    const scaled = (scale: string, letter: string) =>
      `${quoted(before)}#,##0${compactFrac}${scale}${quoted(letter + after)}`;
    return `[>=1000000]${scaled(',,', 'M')};[>=1000]${scaled(',', 'K')};${body('', '')}`;
  }
  return body('', '');
}

/** A colour's relative luminance (WCAG 2). */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Black or white, whichever reads better on the background: one of them always reaches 4.5:1. */
export function textColorOn(background: string): string {
  return contrastRatio(background, '#000000') >= contrastRatio(background, '#ffffff') ? '#000000' : '#ffffff';
}

function mix(from: string, to: string, at: number): string {
  const channel = (i: number) => {
    const a = parseInt(from.slice(i, i + 2), 16);
    const b = parseInt(to.slice(i, i + 2), 16);
    return Math.round(a + (b - a) * at)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${channel(1)}${channel(3)}${channel(5)}`;
}

export interface CellColors {
  background: string;
  text: string;
}

/**
 * The colours of a value cell of total m, or undefined for a plain cell. Rules colour the body only: the
 * cells of row keys by column keys (by the Total column when there are no column fields); the Total row,
 * and the Total column beside column fields, stay plain, as their sums would outrun any rule. The first
 * highlight rule a value passes colours it; otherwise a colour
 * scale spans the lowest to the highest shown value of the innermost cells, which are the ones it colours.
 */
export function cellColorer(
  table: PivotTable,
): (m: number, row: readonly AxisValue[], column: readonly AxisValue[], v: number | null) => CellColors | undefined {
  const { spec } = table;
  const R = spec.rows.length;
  const C = spec.columns.length;
  const leafColumns = C === 0 ? [[]] : table.columns.filter((c) => c.length === C);
  const ranges = spec.totals.map((t, m) => {
    if (!t.look?.colorScale) return undefined;
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of table.rows)
      if (r.length === R)
        for (const c of leafColumns) {
          const v = table.at(r, c)[m];
          if (v !== null && Number.isFinite(v)) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
        }
    return lo <= hi ? { lo, hi } : undefined;
  });
  const colored = (background: string): CellColors => ({ background, text: textColorOn(background) });
  return (m, row, column, v) => {
    const look: TotalLook = spec.totals[m].look ?? {};
    if (v === null || row.length === 0 || (C > 0 && column.length === 0)) return undefined;
    const rule = look.highlight?.find((h) => passes(v, h.when));
    if (rule) return colored(rule.color.toLowerCase());
    const range = ranges[m];
    if (look.colorScale && range && row.length === R && (C === 0 || column.length === C)) {
      const at = range.hi === range.lo ? 0.5 : (v - range.lo) / (range.hi - range.lo);
      return colored(mix(look.colorScale.from.toLowerCase(), look.colorScale.to.toLowerCase(), at));
    }
    return undefined;
  };
}
