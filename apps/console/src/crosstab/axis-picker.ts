import type { CrosstabExecuteParams } from '@quarry/client';
import type { Field } from '../app-state';
import { el, fillSelect } from '../dom';
import { isNumericType } from '../number-format';

/*
 * Rows or columns as an ordered list the analyst builds: add a field, move it up or down (the order
 * nests the axis: the first is the outermost), remove it, and set what the field offers (a date part
 * for a date, a bin width for a number, reverse order). The list's order is what is sent.
 */

export type AxisItem = NonNullable<CrosstabExecuteParams['columns']>[number];
type DateGroup = NonNullable<AxisItem['dateGroup']>;

export const DATE_GROUPS: Array<[DateGroup | '', string]> = [
  ['', 'as stored'],
  ['year', 'year'],
  ['quarter', 'quarter'],
  ['month', 'month'],
  ['week', 'ISO week'],
  ['day', 'day'],
  ['hour', 'hour'],
  ['monthOfYear', 'month of year'],
  ['dayOfWeek', 'day of week'],
  ['hourOfDay', 'hour of day'],
];

export class AxisPicker {
  private fields: Field[] = [];
  private readonly adder: HTMLSelectElement;
  private readonly list: HTMLOListElement;
  private readonly empty: HTMLElement;

  constructor(root: HTMLElement, noun: 'row' | 'column') {
    const id = `${root.id}-add`;
    this.adder = el('select', { id, 'aria-label': `Field to add as a ${noun}` });
    const add = el('button', { type: 'button', class: 'quiet', id: `${root.id}-add-button` }, 'Add');
    add.addEventListener('click', () => {
      if (this.adder.value) this.add({ field: this.adder.value });
    });
    this.list = el('ol', { class: 'axis-list' });
    this.empty = el(
      'p',
      { class: 'hint' },
      noun === 'row' ? 'No row field yet: add at least one.' : 'None: one column of totals.',
    );
    root.append(el('div', { class: 'axis-add' }, this.adder, add), this.list, this.empty);
  }

  setFields(fields: Field[]): void {
    this.fields = fields;
    fillSelect(
      this.adder,
      fields.map((f): [string, string] => [f.name, `${f.name} (${f.type})`]),
    );
    // Fields the new index lacks go.
    for (const li of Array.from(this.list.children) as HTMLElement[])
      if (!fields.some((f) => f.name === li.dataset.field)) li.remove();
    this.refresh();
  }

  clear(): void {
    this.list.replaceChildren();
    this.refresh();
  }

  add(item: AxisItem): void {
    const field = this.fields.find((f) => f.name === item.field);
    const name = item.field;
    const li = el('li', { class: 'axis-item' });
    li.dataset.field = name;
    const options: HTMLElement[] = [];
    if (field?.type === 'date') {
      const group = el(
        'select',
        { class: 'a-date', 'aria-label': `Group ${name} by` },
        ...DATE_GROUPS.map(([v, label]) => el('option', { value: v }, label)),
      );
      group.value = item.dateGroup ?? '';
      options.push(el('label', { class: 'inline' }, 'by ', group));
    }
    if (isNumericType(field?.type)) {
      const bin = el('input', {
        class: 'a-bin',
        type: 'number',
        min: '0',
        step: 'any',
        placeholder: 'no bins',
        'aria-label': `Bin width for ${name}`,
      });
      if (item.bin) bin.value = String(item.bin.width);
      options.push(el('label', { class: 'inline' }, 'bins of ', bin));
    }
    const reverse = el('input', { class: 'a-reverse', type: 'checkbox', 'aria-label': `Reverse the order of ${name}` });
    reverse.checked = item.reverse === true;
    options.push(el('label', { class: 'inline check' }, reverse, 'Z→A'));
    // A manual order of the keys, as a person lists them: "Critical, High, Medium, Low".
    const order = el('input', {
      class: 'a-order',
      type: 'text',
      placeholder: 'order: A, B, …',
      'aria-label': `Order of ${name}'s values, comma-separated (the rest follow)`,
    });
    if (item.order) order.value = item.order.map((v) => (v === null ? '' : String(v))).join(', ');
    options.push(order);
    const button = (cls: string, text: string, label: string, act: () => void) => {
      const b = el('button', { type: 'button', class: `quiet icon ${cls}`, 'aria-label': label, title: label }, text);
      b.addEventListener('click', act);
      return b;
    };
    const up = button('a-up', '↑', `Move ${name} up`, () => this.move(li, -1, 'a-up'));
    const down = button('a-down', '↓', `Move ${name} down`, () => this.move(li, 1, 'a-down'));
    const remove = button('a-remove', '×', `Remove ${name}`, () => {
      const next = (li.nextElementSibling ?? li.previousElementSibling) as HTMLElement | null;
      li.remove();
      this.refresh();
      (next?.querySelector<HTMLElement>('.a-remove') ?? this.adder).focus();
    });
    li.append(
      el('span', { class: 'a-name' }, name),
      el('span', { class: 'a-options' }, ...options),
      el('span', { class: 'a-moves' }, up, down, remove),
    );
    this.list.append(li);
    this.refresh();
  }

  /** Moves an item and keeps the focus on the same button, so the keys can go on moving it. */
  private move(li: HTMLElement, by: -1 | 1, cls: string): void {
    const sibling = by < 0 ? li.previousElementSibling : li.nextElementSibling;
    if (!sibling) return;
    if (by < 0) sibling.before(li);
    else sibling.after(li);
    this.refresh();
    const again = li.querySelector<HTMLButtonElement>(`.${cls}`);
    (again && !again.disabled ? again : li.querySelector<HTMLElement>('.a-remove'))?.focus();
  }

  private refresh(): void {
    const items = Array.from(this.list.children) as HTMLElement[];
    items.forEach((li, i) => {
      li.querySelector<HTMLButtonElement>('.a-up')!.disabled = i === 0;
      li.querySelector<HTMLButtonElement>('.a-down')!.disabled = i === items.length - 1;
    });
    this.empty.hidden = items.length > 0;
  }

  /** The axis as sent, in the list's order: a bare field (rows) or `{field}`, with the options set. */
  items(): AxisItem[] {
    return (Array.from(this.list.children) as HTMLElement[]).map((li) => {
      const field = li.dataset.field!;
      const dateGroup = li.querySelector<HTMLSelectElement>('.a-date')?.value;
      const bin = Number(li.querySelector<HTMLInputElement>('.a-bin')?.value ?? '');
      const reverse = li.querySelector<HTMLInputElement>('.a-reverse')!.checked;
      const numeric = bin > 0 || isNumericType(this.fields.find((f) => f.name === field)?.type);
      const order = (li.querySelector<HTMLInputElement>('.a-order')?.value ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '')
        .map((v) => (numeric && Number.isFinite(Number(v)) ? Number(v) : v));
      return {
        field,
        ...(dateGroup ? { dateGroup: dateGroup as DateGroup } : {}),
        ...(bin > 0 ? { bin: { width: bin } } : {}),
        ...(reverse ? { reverse: true } : {}),
        ...(order.length ? { order } : {}),
      };
    });
  }

  /** A saved report's axis, back in the list. */
  load(items: Array<string | AxisItem> | undefined): void {
    this.clear();
    for (const item of items ?? []) this.add(typeof item === 'string' ? { field: item } : item);
  }
}
