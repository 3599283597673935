import { axisText, type AxisValue } from './axis-value';
import type { AxisSpec } from './crosstab-spec';
import { otherOf } from './other-key';
import { PARTIAL_MARK } from './period-compare';

/**
 * Runs of consecutive keys that share a header at `level`: start → [length, label], as every table
 * format (HTML, XLSX) merges its headers. A subtotal key (shorter than `depth`) stays inside its
 * ancestors' runs but not inside its own level's: there it carries its own "<value> Total" header.
 */
export function headerSpans(
  keys: AxisValue[][],
  level: number,
  depth: number,
  axes: readonly AxisSpec[],
): Map<number, [number, string]> {
  const out = new Map<number, [number, string]>();
  let open: { start: number; prefix: string } | undefined;
  keys.forEach((k, i) => {
    const inside = k.length === depth || k.length >= level + 2;
    if (!inside) {
      open = undefined;
      return;
    }
    const prefix = JSON.stringify(k.slice(0, level + 1));
    const run = open && open.prefix === prefix ? out.get(open.start) : undefined;
    if (run) run[0]++;
    else {
      open = { start: i, prefix };
      const partial = axes[level].partialKey !== undefined && k[level] === axes[level].partialKey;
      out.set(i, [1, `${axisText(axes[level], k[level])}${partial ? PARTIAL_MARK : ''}`]);
    }
  });
  return out;
}

/** A subtotal's header: its own key part, labelled by its axis, and "Total"; the Other key's own label. */
export const subtotalLabel = (key: AxisValue[], axes: readonly AxisSpec[]) =>
  otherOf(key) ? String(key[0]) : `${axisText(axes[key.length - 1], key[key.length - 1])} Total`;
