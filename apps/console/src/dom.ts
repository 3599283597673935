/** Small DOM helpers: every text goes in as text (never as HTML). */

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

export function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

export function on(id: string, event: string, handler: (e: Event) => void): void {
  byId(id).addEventListener(event, handler);
}

/** Replaces a select's options, keeping the chosen value when it is still offered. */
export function fillSelect(select: HTMLSelectElement, values: Array<[string, string]>, keep = true): void {
  const previous = select.value;
  select.replaceChildren(...values.map(([value, label]) => el('option', { value }, label)));
  if (keep && values.some(([v]) => v === previous)) select.value = previous;
}

/** A form submitted by its button or by Enter in any of its fields, selects included. */
export function onSubmit(id: string, handler: () => void): void {
  const form = byId<HTMLFormElement>(id);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    handler();
  });
  // Enter in a text field submits on its own; in a select or on a checkbox it does not.
  form.addEventListener('keydown', (e) => {
    const target = e.target as HTMLElement;
    if (
      e.key === 'Enter' &&
      (target instanceof HTMLSelectElement || (target as HTMLInputElement).type === 'checkbox')
    ) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
}
