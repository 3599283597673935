import { monitorEventLoopDelay } from 'node:perf_hooks';
import { leastOf } from '@quarry/testkit';
import type { FieldDef } from '@quarry/query-language';
import type { AxisValue, GroupRow } from '../../domain/axis-value';
import { pivotLevels, type CrosstabSpec } from '../../domain/crosstab-spec';
import { tableResult, type TableJob } from '../../domain/table-result';
import { plainAxis, specWith } from '../../../test-support/crosstab-input';
import { ThreadTableRenderer } from './thread-table-renderer.adapter';

const field = (name: string): FieldDef => ({ name, type: 'string' }) as FieldDef;

function spec(subtotals = false): CrosstabSpec {
  return specWith({
    rows: [plainAxis(field('r'))],
    columns: [plainAxis(field('c'))],
    totals: [
      { aggregation: 'Sum', field: { name: 'v', type: 'number' } as FieldDef, name: 'Sum of v', showAs: 'value' },
    ],
    subtotals,
  });
}

/** Every group of an R x C pivot (cells, row and column totals, the grand total), values made up. */
function groups(s: CrosstabSpec, rows: number, columns: number): GroupRow[] {
  const out: GroupRow[] = [];
  const rowKeys: AxisValue[][] = Array.from({ length: rows }, (_, i) => [`row${String(i).padStart(4, '0')}`]);
  const columnKeys: AxisValue[][] = Array.from({ length: columns }, (_, j) => [`col${String(j).padStart(3, '0')}`]);
  for (const [r, c] of pivotLevels(s))
    for (const rowKey of r ? rowKeys : [[]])
      for (const columnKey of c ? columnKeys : [[]])
        out.push({ rowKey, columnKey, values: [rowKey.length * 7 + columnKey.length * 3 + out.length] });
  return out;
}

describe('ThreadTableRenderer', () => {
  const renderer = new ThreadTableRenderer({ threads: 2 });
  afterAll(() => renderer.close());

  it('starts one thread with the service, before any table, and no more until tables ask', () => {
    expect(renderer.threads).toBe(1);
  });

  it('answers exactly what the table renders to on this thread, in every format', async () => {
    const s = spec(false);
    const g = groups(s, 300, 40);
    for (const output of ['html', 'json', 'csv', 'grid'] as const) {
      const job: TableJob = { spec: s, groups: g, output, index: 'wide' };
      const [there, here] = await Promise.all([renderer.render(job), tableResult(job)]);
      expect(there).toEqual(here);
      expect(there.counts.slice(0, 2)).toEqual([300, 40]);
    }
  });

  it("gives back the table's own refusal as an AppError with its code", async () => {
    // 401 x 250: the table as drawn is past the 100,000-cell limit.
    const s = spec(false);
    const err = await renderer
      .render({ spec: s, groups: groups(s, 401, 250), output: 'html', index: 'w' })
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'AppError', code: 'INVALID_ARGUMENT' });
    expect(err.message).toContain('With subtotals the crosstab would have more than 100000 cells');
  });

  it('stops at once with the reason of an aborted call', async () => {
    const s = spec(false);
    const controller = new AbortController();
    const pending = renderer.render(
      { spec: s, groups: groups(s, 480, 200), output: 'html', index: 'w' },
      controller.signal,
    );
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('keeps this thread free while a 96,000-cell HTML table is built and rendered', async () => {
    const s = spec(false);
    const job: TableJob = { spec: s, groups: groups(s, 480, 200), output: 'html', index: 'w' };
    // The same table on this thread blocks it for the whole build and render, at once.
    const inline = monitorEventLoopDelay({ resolution: 1 });
    inline.enable();
    const t = performance.now();
    await tableResult(job);
    const inlineMs = performance.now() - t;
    inline.disable();
    // Not a timing target (bench/fairness.bench.js measures that): the longest stall off the loop is a
    // fraction of the whole inline render, the slices' cloning and not the render itself. The fastest of
    // three renders: a pause of this whole process on a loaded machine shows as a stall too, but not in
    // every run, while a render on this thread stalls every one.
    const { ms: stallMs, value: out } = await leastOf(inlineMs / 2, async () => {
      const offLoop = monitorEventLoopDelay({ resolution: 1 });
      offLoop.enable();
      const value = await renderer.render(job);
      offLoop.disable();
      return { ms: offLoop.max / 1e6, value };
    });
    expect(out.payload.length).toBeGreaterThan(1_000_000);
    expect(stallMs).toBeLessThan(inlineMs / 2);
  });
});
