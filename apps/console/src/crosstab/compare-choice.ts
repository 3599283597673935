import type { CrosstabExecuteParams } from '@quarry/client';
import { el } from '../dom';

/*
 * A total's period comparison as one choice: against the previous period or the same one a year before,
 * as the value, the difference or the % difference. The server refuses it (with a message) without a
 * calendar date group among the rows or columns.
 */

type Compare = NonNullable<CrosstabExecuteParams['totals'][number]['compare']>;

const CHOICES: Array<[string, string]> = [
  ['', 'no comparison'],
  ['previousPeriod:value', 'previous period'],
  ['previousPeriod:difference', 'change vs previous period'],
  ['previousPeriod:percentDifference', '% change vs previous period'],
  ['previousYear:value', 'same period last year'],
  ['previousYear:difference', 'change vs last year'],
  ['previousYear:percentDifference', '% change vs last year'],
];

export function compareSelect(n: number): HTMLSelectElement {
  return el(
    'select',
    { class: 't-compare', 'aria-label': `Total ${n} compare with`, title: 'Compare with another period' },
    ...CHOICES.map(([v, label]) => el('option', { value: v }, label)),
  );
}

export function setCompare(select: HTMLSelectElement, compare: Compare | undefined): void {
  select.value = compare ? `${compare.to}:${compare.as ?? 'value'}` : '';
}

/** The chosen comparison as a total's param, or nothing. */
export function chosenCompare(row: HTMLElement): { compare?: Compare } {
  const v = row.querySelector<HTMLSelectElement>('.t-compare')?.value ?? '';
  if (!v) return {};
  const [to, as] = v.split(':') as [Compare['to'], NonNullable<Compare['as']>];
  return { compare: { to, as } };
}
