import { z } from 'zod';
import { quoteInput } from '@quarry/errors';
import * as L from '../limits';
import { arrayOf, intInRange, oneOf, PARAM } from './param-builders';

/*
 * How a total looks on paper and screen: a number format and cell colours. They change no value: JSON
 * keeps raw numbers and echoes them, every other output applies them.
 */

export const NUMBER_STYLES = ['decimal', 'percent', 'currency', 'unit'] as const;
export const NOTATIONS = ['standard', 'compact'] as const;
export const MAX_HIGHLIGHTS = 10;
/** Formats are spelt for one locale, so a report reads the same to every reader and in every output. */
export const FORMAT_LOCALE = 'en-US';

const color = () =>
  z
    .string({ error: `${PARAM} must be a colour as #rrggbb` })
    .max(7, { error: `${PARAM} must be a colour as #rrggbb`, abort: true })
    .regex(/^#[0-9a-fA-F]{6}$/, { error: `${PARAM} must be a colour as #rrggbb` });

export const totalFormatParam = z
  .strictObject(
    {
      style: oneOf(NUMBER_STYLES).optional().meta({ default: 'decimal' }),
      currency: z
        .string({ error: `${PARAM} must be an ISO 4217 currency code (EUR, USD, …)` })
        .max(3, { error: `${PARAM} must be an ISO 4217 currency code (EUR, USD, …)`, abort: true })
        .regex(/^[A-Za-z]{3}$/, { error: `${PARAM} must be an ISO 4217 currency code (EUR, USD, …)` })
        .optional()
        .meta({ description: 'With style currency: the ISO 4217 code.' }),
      unit: z
        .string({ error: `${PARAM} must be a string` })
        .max(L.KEYWORD_MAX, { error: `${PARAM} must be at most ${L.KEYWORD_MAX} characters`, abort: true })
        .optional()
        .meta({ description: 'With style unit: a unit Intl.NumberFormat knows (kilometer, liter-per-kilometer, …).' }),
      minimumFractionDigits: intInRange(0, 20),
      maximumFractionDigits: intInRange(0, 20),
      notation: oneOf(NOTATIONS).optional().meta({ default: 'standard' }),
    },
    {
      error: `${PARAM} must be an object with style, currency, unit, minimumFractionDigits, maximumFractionDigits or notation`,
    },
  )
  .meta({
    description:
      "How the total's numbers are written (Intl.NumberFormat options, en-US) in HTML, XLSX (as an Excel number format; cells stay numbers), PDF and charts; JSON keeps raw numbers. With style percent a value of 0.25 reads 25% (a total shown as a percentage of something is already out of 100 and reads as such).",
  });

export const highlightParam = z
  .strictObject(
    {
      when: z.strictObject(
        {
          op: oneOf(L.FILTER_OPS),
          value: z.number({ error: `${PARAM} must be a number` }),
        },
        { error: `${PARAM} must be an object with op and value` },
      ),
      color: color(),
    },
    { error: `${PARAM} must be an object with when and color` },
  )
  .meta({
    description:
      'Colours the cells whose shown value passes `when`; the first rule that passes wins (over colorScale).',
  });

export const colorScaleParam = z
  .strictObject({ from: color(), to: color() }, { error: `${PARAM} must be an object with from and to` })
  .meta({ description: "Colours each body cell between from (the total's lowest shown value) and to (its highest)." });

export const totalLookParams = {
  format: totalFormatParam.optional(),
  highlight: arrayOf(highlightParam, MAX_HIGHLIGHTS).optional(),
  colorScale: colorScaleParam.optional(),
};

export type TotalFormat = z.output<typeof totalFormatParam>;
export type Highlight = z.output<typeof highlightParam>;
export type ColorScale = z.output<typeof colorScaleParam>;

/** A total's look as services take it: absent parts stay absent (the renderer's plain look). */
export interface TotalLook {
  format?: TotalFormat;
  highlight?: Highlight[];
  colorScale?: ColorScale;
}

/** The Intl options of a format, the currency upper-cased (Intl accepts either, Excel's symbol wants one). */
export function intlOptions(f: TotalFormat): Intl.NumberFormatOptions {
  return {
    style: f.style ?? 'decimal',
    ...(f.currency !== undefined ? { currency: f.currency.toUpperCase() } : {}),
    ...(f.unit !== undefined ? { unit: f.unit } : {}),
    ...(f.minimumFractionDigits !== undefined ? { minimumFractionDigits: f.minimumFractionDigits } : {}),
    ...(f.maximumFractionDigits !== undefined ? { maximumFractionDigits: f.maximumFractionDigits } : {}),
    notation: f.notation ?? 'standard',
  };
}

/**
 * Rules of a total's look that JSON Schema cannot state, each with its key under the total: which keys go
 * together, and whether Intl can write the format at all (an unknown currency or unit).
 */
export function lookProblems(t: TotalLook): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const f = t.format;
  if (f) {
    const style = f.style ?? 'decimal';
    if (style === 'currency' && f.currency === undefined)
      out.push(['format.currency', `${PARAM} is required with style currency`]);
    if (style !== 'currency' && f.currency !== undefined)
      out.push(['format.currency', `${PARAM} goes with style currency only`]);
    if (style === 'unit' && f.unit === undefined) out.push(['format.unit', `${PARAM} is required with style unit`]);
    if (style !== 'unit' && f.unit !== undefined) out.push(['format.unit', `${PARAM} goes with style unit only`]);
    if (
      f.minimumFractionDigits !== undefined &&
      f.maximumFractionDigits !== undefined &&
      f.minimumFractionDigits > f.maximumFractionDigits
    )
      out.push(['format.maximumFractionDigits', `${PARAM} must be at least minimumFractionDigits`]);
    if (f.currency !== undefined && !Intl.supportedValuesOf('currency').includes(f.currency.toUpperCase()))
      out.push(['format.currency', `${PARAM}: ${quoteInput(f.currency)} is not an ISO 4217 currency code`]);
    // A digit count the schema refused already has its 400: Intl's RangeError would name nothing new.
    const digitsValid = [f.minimumFractionDigits, f.maximumFractionDigits].every(
      (d) => d === undefined || (Number.isInteger(d) && d >= 0 && d <= 20),
    );
    if (out.length === 0 && digitsValid) {
      try {
        new Intl.NumberFormat(FORMAT_LOCALE, intlOptions(f));
      } catch {
        // Units are the only option left that Intl refuses (RangeError) after the checks above.
        out.push(['format.unit', `${PARAM}: ${quoteInput(f.unit ?? '')} is not a unit Intl.NumberFormat knows`]);
      }
    }
  }
  return out;
}
