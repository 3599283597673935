import { el } from './dom';

/*
 * A wide table scrolls inside its own box: headers stick to the top, row labels to the left, and a
 * shadow plus a line of text say that more columns lie to the right (or left), until the reader gets
 * there. Offsets are measured once the table is laid out (nested row labels stick side by side).
 */

/** The table inside a scrolling box with its cues; `labels` says how many leading columns are row labels. */
export function scrollingTable(table: HTMLTableElement, label: string): HTMLElement {
  const wrap = el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': label }, table);
  const hint = el('p', { class: 'scroll-hint', hidden: '' }, 'Scroll sideways for more columns →');
  const box = el('div', { class: 'scroller' }, wrap, hint);
  const update = () => {
    const more = wrap.scrollWidth - wrap.clientWidth;
    box.classList.toggle('more-right', more > 1 && wrap.scrollLeft < more - 1);
    box.classList.toggle('more-left', wrap.scrollLeft > 1);
    hint.hidden = more <= 1;
    hint.textContent =
      wrap.scrollLeft >= more - 1 ? '← Scroll back for the first columns' : 'Scroll sideways for more columns →';
  };
  wrap.addEventListener('scroll', update, { passive: true });
  new ResizeObserver(() => {
    stickHeaderRows(table);
    stickRowLabels(table);
    update();
  }).observe(wrap);
  return box;
}

/** Each header row sticks below the ones above it (a cell spanning several rows, at its first). */
function stickHeaderRows(table: HTMLTableElement): void {
  const rows = Array.from(table.tHead?.rows ?? []);
  // Measured from the first header row: a caption above it scrolls away.
  const first = rows[0]?.offsetTop ?? 0;
  for (const row of rows) for (const cell of Array.from(row.cells)) cell.style.top = `${row.offsetTop - first}px`;
}

/**
 * Row labels (th scope=row, and the header cells above them) stick at the left edge of the box, each
 * level beside the one before: its `left` is where the table put it.
 */
function stickRowLabels(table: HTMLTableElement): void {
  const cells = Array.from(table.querySelectorAll<HTMLElement>('.row-label'));
  // `auto` turns the stickiness off while measuring: a stuck cell reports where it is stuck.
  for (const c of cells) c.style.left = 'auto';
  const lefts = cells.map((c) => c.offsetLeft);
  cells.forEach((c, i) => {
    c.style.left = `${lefts[i]}px`;
  });
}
