import { AGGREGATIONS, SHOW_AS, type CrosstabExecuteParams } from '@quarry/client';
import type { IndexInfo } from '../app-state';
import { el, fillSelect } from '../dom';
import { chosenCompare, compareSelect, setCompare } from './compare-choice';

/*
 * The totals: each an aggregation of a field (or of the records, or distinct values of a dynamic view),
 * a percentile, or a formula over the other totals by name; each with a name and a "show as".
 */

export type Total = CrosstabExecuteParams['totals'][number];
type ShowAs = (typeof SHOW_AS)[number];

/** Count first: a new total counts the records until another aggregation is chosen. */
const AGGREGATION_CHOICES = ['Count', ...AGGREGATIONS.filter((a) => a !== 'Count')];
/** A calculated total is chosen like an aggregation, and then takes a name and a formula. */
const FORMULA = 'Formula';
const SHOW_AS_LABELS: Record<ShowAs, string> = {
  value: 'value',
  percentOfGrandTotal: '% of grand total',
  percentOfRowTotal: '% of row total',
  percentOfColumnTotal: '% of column total',
  runningTotal: 'running total',
  differenceFromPrevious: 'difference from previous',
  percentDifferenceFromPrevious: '% difference from previous',
  percentOfParentRow: '% of parent row',
  percentOfParentColumn: '% of parent column',
  rankInColumn: 'rank in column',
  rankInRow: 'rank in row',
  movingAverage: 'moving average',
};
/** A moving average's window when none was typed: three rows. */
const DEFAULT_WINDOW = 3;

type Look = Pick<Total, 'format' | 'highlight' | 'colorScale'>;
type Format = NonNullable<Total['format']>;

/** Number formats offered by name; a saved total's other format is kept as it is ("as saved"). */
const FORMATS: Array<[string, string, Format | undefined]> = [
  ['', 'plain numbers', undefined],
  ['whole', '1,235', { maximumFractionDigits: 0 }],
  ['two', '1,234.57', { minimumFractionDigits: 2, maximumFractionDigits: 2 }],
  ['compact', '1.2K', { notation: 'compact', maximumFractionDigits: 1 }],
  ['percent', '12.5% (of 1)', { style: 'percent', maximumFractionDigits: 1 }],
  ['currency', 'money', { style: 'currency', currency: 'USD' }],
];
const AS_SAVED = 'saved';
const SCALE = { from: '#f7fbff', to: '#08519c' };

/** The preset a format is, or AS_SAVED; a currency preset matches any currency (its code has a box). */
function presetOf(format: Format | undefined): string {
  if (!format) return '';
  if (format.style === 'currency' && Object.keys(format).every((k) => k === 'style' || k === 'currency'))
    return 'currency';
  const same = FORMATS.find(([, , f]) => f && JSON.stringify(f) === JSON.stringify(format));
  return same ? same[0] : AS_SAVED;
}

export class TotalsEditor {
  private index: IndexInfo | undefined;

  constructor(
    private readonly root: HTMLElement,
    /** Called when the totals change (their number names the filter's and the order's choices). */
    private readonly changed: () => void,
  ) {}

  private rows(): HTMLElement[] {
    return Array.from(this.root.querySelectorAll<HTMLElement>('.total'));
  }

  setIndex(index: IndexInfo | undefined): void {
    this.index = index;
    if (this.rows().length === 0) this.add();
    for (const row of this.rows()) this.fill(row);
  }

  private fill(row: HTMLElement): void {
    // Counts take any field; the numeric aggregations are refused on text by the server, with a message.
    fillSelect(row.querySelector<HTMLSelectElement>('.t-field')!, [
      ['', '(records)'],
      ...(this.index?.fields ?? []).map((f): [string, string] => [f.name, `${f.name} (${f.type})`]),
    ]);
    fillSelect(row.querySelector<HTMLSelectElement>('.t-view')!, [
      ['', '(no view)'],
      ...(this.index?.dynamicViews ?? [])
        .filter((v) => v !== 'Records')
        .map((v): [string, string] => [v, `distinct ${v}`]),
    ]);
  }

  add(total?: Total): void {
    const n = this.rows().length + 1;
    const agg = el(
      'select',
      { class: 't-agg', 'aria-label': `Total ${n} aggregation` },
      ...[...AGGREGATION_CHOICES, FORMULA].map((a) => el('option', { value: a }, a)),
    );
    const field = el('select', { class: 't-field', 'aria-label': `Total ${n} field` });
    const percentile = el('input', {
      class: 't-pct',
      type: 'number',
      min: '0',
      max: '100',
      step: 'any',
      placeholder: 'percentile',
      'aria-label': `Total ${n} percentile`,
      hidden: '',
    });
    const name = el('input', {
      class: 't-name',
      type: 'text',
      placeholder: 'name (optional)',
      'aria-label': `Total ${n} name`,
    });
    const formula = el('input', {
      class: 't-formula',
      type: 'text',
      placeholder: '[Sum (Cost)] / [Count (Records)]',
      'aria-label': `Total ${n} formula`,
      hidden: '',
    });
    const view = el('select', { class: 't-view', 'aria-label': `Total ${n} dynamic view` });
    const showAs = el(
      'select',
      { class: 't-show', 'aria-label': `Total ${n} show as` },
      ...SHOW_AS.map((v) => el('option', { value: v }, SHOW_AS_LABELS[v])),
    );
    const compare = compareSelect(n);
    const format = el(
      'select',
      { class: 't-format', 'aria-label': `Total ${n} number format` },
      ...FORMATS.map(([v, label]) => el('option', { value: v }, label)),
    );
    const currency = el('input', {
      class: 't-currency',
      type: 'text',
      maxlength: '3',
      size: '4',
      value: 'USD',
      placeholder: 'EUR',
      'aria-label': `Total ${n} currency (ISO code)`,
      hidden: '',
    });
    const scale = el('input', { class: 't-scale', type: 'checkbox', 'aria-label': `Total ${n} colour scale` });
    const scaleLabel = el(
      'label',
      { class: 'inline', title: 'Colour cells from pale (lowest) to dark (highest)' },
      scale,
      'scale',
    );
    const window = el('input', {
      class: 't-window',
      type: 'number',
      min: '2',
      max: '100',
      step: '1',
      placeholder: `window (${DEFAULT_WINDOW})`,
      'aria-label': `Total ${n} moving average window`,
      hidden: '',
    });
    const sync = () => {
      currency.hidden = format.value !== 'currency';
      percentile.hidden = agg.value !== 'Percentile';
      window.hidden = showAs.value !== 'movingAverage';
      const isFormula = agg.value === FORMULA;
      formula.hidden = !isFormula;
      field.hidden = isFormula;
      view.hidden = isFormula;
    };
    agg.addEventListener('change', sync);
    format.addEventListener('change', sync);
    showAs.addEventListener('change', sync);
    const remove = el(
      'button',
      { type: 'button', class: 'quiet icon', 'aria-label': `Remove total ${n}`, title: 'Remove' },
      '×',
    );
    const row = el(
      'div',
      { class: 'total row' },
      agg,
      field,
      percentile,
      formula,
      view,
      name,
      showAs,
      window,
      compare,
      format,
      currency,
      scaleLabel,
      remove,
    );
    remove.addEventListener('click', () => {
      if (this.rows().length > 1) {
        row.remove();
        this.changed();
      }
    });
    this.root.append(row);
    this.fill(row);
    if (total) {
      agg.value = 'formula' in total && total.formula !== undefined ? FORMULA : (total.aggregationType ?? 'Count');
      field.value = total.field ?? '';
      view.value = total.dynamicView ?? '';
      name.value = total.name ?? '';
      formula.value = total.formula ?? '';
      percentile.value = total.percentile !== undefined ? String(total.percentile) : '';
      showAs.value = total.showAs ?? 'value';
      window.value = total.window !== undefined ? String(total.window) : '';
      setCompare(compare, total.compare);
      // What the form has no control for (highlight rules, a format of its own) is kept as saved.
      const preset = presetOf(total.format);
      if (preset === AS_SAVED) format.append(el('option', { value: AS_SAVED }, 'as saved'));
      format.value = preset;
      if (total.format?.currency) currency.value = total.format.currency;
      scale.checked = total.colorScale !== undefined;
      row.dataset.look = JSON.stringify({
        format: total.format,
        highlight: total.highlight,
        colorScale: total.colorScale,
      });
    }
    sync();
    this.changed();
  }

  load(totals: Total[]): void {
    this.root.replaceChildren();
    for (const t of totals) this.add(t);
    if (totals.length === 0) this.add();
  }

  /** Each total's label as the server names it when no name is given: `Sum (Worldwide Gross)`. */
  labels(): string[] {
    return this.rows().map((row, i) => {
      const name = row.querySelector<HTMLInputElement>('.t-name')!.value.trim();
      if (name) return name;
      const agg = row.querySelector<HTMLSelectElement>('.t-agg')!.value;
      if (agg === FORMULA) return `Total ${i + 1}`;
      const view = row.querySelector<HTMLSelectElement>('.t-view')!.value;
      const field = row.querySelector<HTMLSelectElement>('.t-field')!.value;
      return `${agg} (${view || field || 'Records'})`;
    });
  }

  /** The total's format and colours from the controls, and what it was saved with that they do not show. */
  private look(row: HTMLElement): Look {
    const saved = (row.dataset.look ? JSON.parse(row.dataset.look) : {}) as Look;
    const preset = row.querySelector<HTMLSelectElement>('.t-format')!.value;
    const code = row.querySelector<HTMLInputElement>('.t-currency')!.value.trim().toUpperCase();
    const format =
      preset === AS_SAVED
        ? saved.format
        : preset === 'currency'
          ? { style: 'currency' as const, currency: code }
          : FORMATS.find(([v]) => v === preset)?.[2];
    const scaled = row.querySelector<HTMLInputElement>('.t-scale')!.checked;
    return {
      ...(format ? { format } : {}),
      ...(saved.highlight ? { highlight: saved.highlight } : {}),
      ...(scaled ? { colorScale: saved.colorScale ?? SCALE } : {}),
    };
  }

  totals(): Total[] {
    return this.rows().map((row) => {
      const aggregationType = row.querySelector<HTMLSelectElement>('.t-agg')!.value;
      const field = row.querySelector<HTMLSelectElement>('.t-field')!.value;
      const view = row.querySelector<HTMLSelectElement>('.t-view')!.value;
      const name = row.querySelector<HTMLInputElement>('.t-name')!.value.trim();
      const percentile = row.querySelector<HTMLInputElement>('.t-pct')!.value;
      const showAs = row.querySelector<HTMLSelectElement>('.t-show')!.value as ShowAs;
      const window = row.querySelector<HTMLInputElement>('.t-window')!.value;
      const shown = {
        ...(name ? { name } : {}),
        ...(showAs !== 'value' ? { showAs } : {}),
        ...(showAs === 'movingAverage' ? { window: window === '' ? DEFAULT_WINDOW : Number(window) } : {}),
        ...this.look(row),
      };
      if (aggregationType === FORMULA)
        return { ...shown, formula: row.querySelector<HTMLInputElement>('.t-formula')!.value };
      return {
        aggregationType,
        ...(view ? { dynamicView: view } : field ? { field } : {}),
        ...(aggregationType === 'Percentile' && percentile !== '' ? { percentile: Number(percentile) } : {}),
        ...shown,
        ...chosenCompare(row),
      };
    });
  }
}
