import type { ReportsExecuteParams, ReportsMetadataResult } from '@quarry/client';
import { el } from './dom';

/*
 * The form a report's declared parameters get when it is run from the Versions view: one field per
 * parameter, typed by its field (numbers, dates, true/false, text one value per line), prefilled with the
 * default. Its values go to REPORTS.EXECUTE `parameters`; the server checks them (a wrong one is a 400 shown
 * in the status line).
 */

type Parameter = ReportsMetadataResult['parameters'][number];
type Setting = NonNullable<NonNullable<ReportsExecuteParams['parameters']>[string]>;

const NUMERIC = new Set(['number', 'integer']);

/** A typed value from what was typed: numbers as numbers (a non-number goes as text, for the server to name). */
function typed(text: string, fieldType: string): string | number | boolean {
  const t = text.trim();
  if (NUMERIC.has(fieldType) && t !== '' && Number.isFinite(Number(t))) return Number(t);
  if (fieldType === 'boolean' && (t === 'true' || t === 'false')) return t === 'true';
  return fieldType === 'string' ? text : t;
}

const inputType = (fieldType: string) => (NUMERIC.has(fieldType) ? 'number' : 'text');

function label(p: Parameter): string {
  return `${p.name}${p.required ? ' (required)' : ''} — ${p.field}, ${p.kind === 'range' ? 'from/to' : 'any of'}`;
}

function rangeInputs(p: Parameter, id: string): HTMLElement {
  const d = p.default !== undefined && !Array.isArray(p.default) ? p.default : {};
  const end = (which: 'from' | 'to') =>
    el('input', {
      id: `${id}-${which}`,
      name: `${p.name}.${which}`,
      type: inputType(p.fieldType),
      'aria-label': `${p.name} ${which}`,
      placeholder: p.fieldType === 'date' ? '2024-03' : which,
      ...(d[which] !== undefined ? { value: String(d[which]) } : {}),
      ...(NUMERIC.has(p.fieldType) ? { step: 'any' } : {}),
    });
  return el('span', { class: 'range' }, end('from'), ' to ', end('to'));
}

function valuesInput(p: Parameter, id: string): HTMLElement {
  const d = Array.isArray(p.default) ? p.default.map(String) : [];
  if (p.fieldType === 'boolean') {
    const select = el(
      'select',
      { id, name: p.name, 'aria-label': p.name },
      el('option', { value: '' }, 'any'),
      el('option', { value: 'true' }, 'true'),
      el('option', { value: 'false' }, 'false'),
    );
    if (d.length === 1) select.value = d[0];
    return select;
  }
  const area = el('textarea', {
    id,
    name: p.name,
    rows: '2',
    'aria-label': p.name,
    placeholder: 'one value per line',
  });
  area.value = d.join('\n');
  return area;
}

/** The form, or null when the report declares no parameters. */
export function parametersForm(parameters: readonly Parameter[]): HTMLFieldSetElement | null {
  if (parameters.length === 0) return null;
  const rows = parameters.map((p, i) => {
    const id = `report-parameter-${i}`;
    return el(
      'p',
      { 'data-parameter': p.name },
      el('label', { for: p.kind === 'range' ? `${id}-from` : id }, label(p)),
      ' ',
      p.kind === 'range' ? rangeInputs(p, id) : valuesInput(p, id),
    );
  });
  return el('fieldset', { id: 'report-parameters' }, el('legend', {}, 'Parameters'), ...rows);
}

/** What the form holds, as REPORTS.EXECUTE takes it; a parameter left empty is not sent (its default applies). */
export function parametersOf(
  form: HTMLFieldSetElement | null,
  parameters: readonly Parameter[],
): Record<string, Setting> {
  const out: Record<string, Setting> = {};
  if (!form) return out;
  parameters.forEach((p, i) => {
    const id = `report-parameter-${i}`;
    const value = (suffix = '') =>
      (form.querySelector(`#${id}${suffix}`) as HTMLInputElement | HTMLTextAreaElement | null)?.value ?? '';
    if (p.kind === 'range') {
      const [from, to] = [value('-from'), value('-to')];
      if (from.trim() === '' && to.trim() === '') return;
      out[p.name] = {
        ...(from.trim() !== '' ? { from: typed(from, p.fieldType) as string | number } : {}),
        ...(to.trim() !== '' ? { to: typed(to, p.fieldType) as string | number } : {}),
      };
      return;
    }
    const [first, ...rest] = value()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => typed(line, p.fieldType));
    if (first !== undefined) out[p.name] = [first, ...rest];
  });
  return out;
}
