/*
 * The tabs, from the page: every `[role=tab]` in the tab list controls the section it names
 * (aria-controls). A panel module adds its button and section to index.html and may register what to do
 * when its tab is shown. Keyboard as WAI-ARIA's tabs pattern: one tab in the tab order, arrows, Home, End.
 */
const shown = new Map<string, () => void>();

function tabs(): HTMLElement[] {
  return Array.from(document.querySelectorAll<HTMLElement>('[role=tablist] [role=tab]'));
}

const nameOf = (tab: HTMLElement) => tab.id.replace(/^tab-/, '');

export function selectTab(name: string, focus = false): void {
  for (const tab of tabs()) {
    const active = nameOf(tab) === name;
    tab.setAttribute('aria-selected', String(active));
    tab.tabIndex = active ? 0 : -1;
    const panel = document.getElementById(tab.getAttribute('aria-controls') ?? '');
    if (panel) panel.hidden = !active;
    if (active && focus) tab.focus();
  }
  shown.get(name)?.();
}

/** What to do each time the tab is shown (a list to refresh). */
export function onTabShown(name: string, handler: () => void): void {
  shown.set(name, handler);
}

export function startTabs(): void {
  const all = tabs();
  for (const tab of all) {
    tab.addEventListener('click', () => selectTab(nameOf(tab)));
    tab.addEventListener('keydown', (e) => {
      const i = all.indexOf(tab);
      const next =
        e.key === 'ArrowRight'
          ? all[(i + 1) % all.length]
          : e.key === 'ArrowLeft'
            ? all[(i - 1 + all.length) % all.length]
            : e.key === 'Home'
              ? all[0]
              : e.key === 'End'
                ? all[all.length - 1]
                : undefined;
      if (!next) return;
      e.preventDefault();
      selectTab(nameOf(next), true);
    });
  }
  const current = all.find((t) => t.getAttribute('aria-selected') === 'true') ?? all[0];
  selectTab(nameOf(current));
}
