import type { AuditLog, CrosstabShape, IndexEntry } from '@quarry/metadata-store';
import { MAX_ROLLUP_FIELDS } from './parse-rollup';

/** Audit entries read at most: the newest ones. */
const READ_AT_MOST = 100_000;
const SHOWN = 5;

/** The grain a date group needs its rollup kept at (undefined: none can serve it). */
const GRAIN_OF: Record<string, string | undefined> = {
  year: 'year',
  quarter: 'quarter',
  month: 'month',
  monthOfYear: 'month',
  week: 'week',
  day: 'day',
  dayOfWeek: 'day',
};
const FINER = ['day', 'week', 'month', 'quarter', 'year'];
/** The finer of two grains, or day when neither holds the other (a week is within no month). */
const finest = (a: string, b: string) =>
  a === b ? a : a === 'week' || b === 'week' ? 'day' : FINER.indexOf(a) < FINER.indexOf(b) ? a : b;

interface Candidate {
  rows: string[];
  dates: Map<string, string>;
  totals: Set<string>;
  calls: number;
}

/** A crosstab shape as the rollup that would serve it, or undefined when none could. */
function candidateOf(shape: CrosstabShape, entry: IndexEntry): Omit<Candidate, 'calls'> | undefined {
  const byName = new Map(entry.fields.map((f) => [f.name.toLowerCase(), f]));
  const rows: string[] = [];
  const dates = new Map<string, string>();
  for (const a of [...shape.rows, ...shape.columns]) {
    const f = byName.get(a.field.toLowerCase());
    if (!f) return undefined;
    if (f.type !== 'date') {
      if (a.dateGroup) return undefined;
      rows.push(f.name);
      continue;
    }
    const grain = a.dateGroup ? GRAIN_OF[a.dateGroup] : (f.grain ?? 'day');
    if (!grain) return undefined;
    dates.set(f.name, dates.has(f.name) ? finest(dates.get(f.name)!, grain) : grain);
  }
  const totals = new Set<string>();
  for (const t of shape.totals) {
    const f = t.field ? byName.get(t.field.toLowerCase()) : undefined;
    if (t.field && !f) return undefined;
    const numeric = f?.type === 'integer' || f?.type === 'number';
    const kind: Record<string, string | undefined> = {
      Sum: 'sum',
      Average: 'average',
      Min: 'min',
      Max: 'max',
      CountDistinct: 'countDistinct',
      // A count of a field's values comes with its average's partials.
      Count: f ? (numeric ? 'average' : undefined) : 'count',
    };
    const k = kind[t.aggregation];
    if (!k || (k !== 'countDistinct' && k !== 'count' && !numeric)) return undefined;
    totals.add(f ? `${k}:${f.name}` : k);
  }
  if (rows.length === 0 || totals.size === 0) return undefined;
  return { rows, dates, totals };
}

/**
 * `quarry index rollup suggest`: the crosstabs of the index in the audit trail (their shapes: axes and
 * totals, never queries), grouped by the fields they group by, each group as the rollup that would
 * serve all of its calls, the most called first; groups an existing rollup already has are left out.
 */
export async function suggestRollups(audit: AuditLog, entry: IndexEntry): Promise<string> {
  const calls = (await audit.listAudit({ method: 'CROSSTAB.EXECUTE', limit: READ_AT_MOST })).filter(
    (e) => e.index === entry.name && e.outcome === 'ok' && e.shape,
  );
  const groups = new Map<string, Candidate>();
  for (const call of calls) {
    let shape: CrosstabShape;
    try {
      shape = JSON.parse(call.shape as string) as CrosstabShape;
    } catch {
      continue;
    }
    const c = candidateOf(shape, entry);
    if (!c) continue;
    const key = JSON.stringify([[...c.rows].sort(), [...c.dates.keys()].sort()]);
    const g = groups.get(key);
    if (!g) {
      groups.set(key, { ...c, calls: 1 });
      continue;
    }
    g.calls++;
    for (const t of c.totals) g.totals.add(t);
    for (const [d, grain] of c.dates) g.dates.set(d, finest(g.dates.get(d) ?? grain, grain));
  }
  const existing = new Set(
    (entry.rollups ?? []).map((r) => JSON.stringify([[...r.rows].sort(), r.columns.map((c) => c.field).sort()])),
  );
  const ranked = [...groups.entries()]
    .filter(([key, g]) => !existing.has(key) && g.rows.length + g.dates.size <= MAX_ROLLUP_FIELDS)
    .map(([, g]) => g)
    .sort((a, b) => b.calls - a.calls)
    .slice(0, SHOWN);
  if (ranked.length === 0)
    return `no rollup to suggest for ${entry.name}: ${calls.length} crosstab call${calls.length === 1 ? '' : 's'} in the audit trail, none a new rollup would serve`;
  return ranked
    .map((g) => {
      const columns = [...g.dates].map(([f, grain]) => `${f}:${grain}`);
      const args = [
        `--rows ${g.rows.join(',')}`,
        ...(columns.length ? [`--columns ${columns.join(',')}`] : []),
        `--totals ${[...g.totals].sort().join(',')}`,
      ];
      return `# ${g.calls} of ${calls.length} crosstab calls\nquarry index rollup add ${entry.name} ${args.join(' ')}`;
    })
    .join('\n');
}
