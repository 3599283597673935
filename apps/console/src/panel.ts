import { QuarryError, type MethodName, type ParamsOf, type ResultOf } from '@quarry/client';
import { app } from './app-state';
import { showCurl } from './curl';
import { el } from './dom';

/** How a panel speaks of its own form, set by the panel that knows the form. */
export interface PanelOptions {
  /**
   * An error's detail in the words of the controls on screen (the API's parameter names replaced by
   * their labels), with those controls: their section is opened and they are marked invalid.
   */
  explain?: (detail: string) => { detail: string; controls: HTMLElement[] };
  /** Whether a cleared result area shows its first content (what to do next): not once that is done. */
  hintWanted?: () => boolean;
}

/**
 * One tab's section: its own status line, error box and result area, so that what one tab did never
 * shows on another, and an error never sits under the previous answer. Every panel module makes one
 * and calls the API through it.
 */
export class Panel {
  readonly section: HTMLElement;
  private readonly statusLine: HTMLElement;
  private readonly errorBox: HTMLElement;
  /** Each result area's first content (what to do), put back whenever the area is cleared. */
  private readonly initial = new Map<HTMLElement, Node[]>();
  /** The controls the last error named, unmarked when the error goes. */
  private marked: HTMLElement[] = [];
  private readonly options: PanelOptions = {};

  constructor(readonly name: string) {
    const section = document.getElementById(`panel-${name}`);
    if (!section) throw new Error(`#panel-${name} is missing from the page`);
    this.section = section;
    this.statusLine = this.part('.status', () => el('p', { class: 'status', role: 'status', 'aria-live': 'polite' }));
    this.errorBox = this.part('.error', () => el('div', { class: 'error', role: 'alert', hidden: '' }));
    for (const area of Array.from(this.section.querySelectorAll<HTMLElement>('[data-result]')))
      this.initial.set(area, Array.from(area.childNodes));
  }

  /** The section's own element, or one made and put under its heading. */
  private part(selector: string, make: () => HTMLElement): HTMLElement {
    const found = this.section.querySelector<HTMLElement>(`:scope > ${selector}`);
    if (found) return found;
    const made = make();
    this.section.querySelector(':scope > h2')?.after(made);
    return made;
  }

  status(text: string): void {
    this.statusLine.textContent = text;
  }

  /**
   * Empties the areas that hold an answer (`data-result`, back to their first content) and hides what
   * only goes with one (`data-with-result`): after an error a stale table is never read as the new one.
   */
  clearResults(): void {
    const hint = this.options.hintWanted?.() ?? true;
    for (const [area, nodes] of this.initial)
      area.replaceChildren(...(hint ? nodes.map((n) => n.cloneNode(true)) : []));
    for (const part of Array.from(this.section.querySelectorAll<HTMLElement>('[data-with-result]'))) part.hidden = true;
  }

  /** Shows the error; the answer on screen goes too unless `keep` (a failed save leaves the table it saved). */
  fail(err: unknown, keep = false): void {
    const box = this.errorBox;
    box.replaceChildren();
    this.unmark();
    if (err instanceof QuarryError) {
      const said = this.options.explain?.(err.detail) ?? { detail: err.detail, controls: [] };
      box.append(el('strong', {}, `${err.code} ${err.title}`), ' ', said.detail);
      this.mark(said.controls);
      if (err.requestId) box.append(el('small', {}, ` (request ${err.requestId})`));
    } else {
      box.append(el('strong', {}, 'Request failed'), ' ', err instanceof Error ? err.message : String(err));
    }
    box.hidden = false;
    if (!keep) this.clearResults();
    this.status('');
  }

  /** Sets how this panel speaks of its form (the panel module calls it once its form is built). */
  configure(options: PanelOptions): void {
    Object.assign(this.options, options);
  }

  /** The named controls marked invalid, each collapsed section holding one opened so it is seen. */
  private mark(controls: HTMLElement[]): void {
    for (const c of controls) {
      c.setAttribute('aria-invalid', 'true');
      const section = c.closest('details');
      if (section) section.open = true;
    }
    this.marked = controls;
  }

  private unmark(): void {
    for (const c of this.marked) c.removeAttribute('aria-invalid');
    this.marked = [];
  }

  clearError(): void {
    this.unmark();
    this.errorBox.hidden = true;
    this.errorBox.replaceChildren();
  }

  /** Everything this panel showed: status, error and answers (a new token, a new connection). */
  reset(): void {
    this.clearError();
    this.status('');
    this.clearResults();
  }

  /** One JSON-RPC call, shown as curl; undefined (and the error shown here) when it fails, unless `rethrow`. */
  async call<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    opts: { keep?: boolean; rethrow?: boolean } = {},
  ): Promise<ResultOf<M> | undefined> {
    showCurl(method, params);
    if (!app.client) {
      this.fail(new Error('Enter an API token first (in the field at the top), then Connect.'), opts.keep);
      return undefined;
    }
    this.clearError();
    this.status('Working…');
    try {
      return (await app.client.call(method, params)).data;
    } catch (err) {
      // The caller words this failure itself (a name already taken).
      if (opts.rethrow) {
        this.status('');
        throw err;
      }
      this.fail(err, opts.keep);
      return undefined;
    }
  }
}
