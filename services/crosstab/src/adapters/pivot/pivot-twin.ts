import type { DuckDBValue } from '@quarry/snapshots';
import type { CrosstabSpec } from '../../domain/crosstab-spec';
import type { PeriodShift } from '../../domain/period-shift';
import type { PivotTwin } from '../../ports/pivot-engine.port';
import { HOLISTIC, type RollupView } from './pivot-partials';
import { notMemberSql } from './pivot-sql';
import { shiftCut } from './pivot-shift';

/*
 * Twins: a subset of a pass's records (a compared period's, an Other row's) aggregated in the same scan
 * as the pass itself. Each record carries a flag "in the subset"; every aggregate is computed a second
 * time with FILTER (WHERE flag) in the same groups, so a twin costs a few more aggregates per record
 * instead of a second scan and a second hash table. Exact for every aggregation: a median or a distinct
 * count is computed from the subset's records, never from other groups' values.
 */

/** A twin as a plan computes it. */
export interface PlanTwin {
  /** SQL true (never null) for a record of the subset. */
  sql: string;
  /** The spec's totals the twin computes; the others are null. */
  totals: ReadonlySet<number>;
  /** Keys on this field are moved forward by the shift (a compared period lands on the current one). */
  moved?: PeriodShift;
}

/** How the roll-up reads a twin from the pivot's rows. */
export interface TwinView extends RollupView {
  /** The column counting the twin's records in a row: a group exists only where it is above 0. */
  count: string;
  computes: (total: number) => boolean;
}

export const twinAlias = (alias: string, k: number) => `${alias}_w${k}`;
export const movedAlias = (alias: string, k: number) => `${alias}_s${k}`;
export const TWIN_COUNT = (k: number) => `__n_w${k}`;

/**
 * The twins as SQL over the table's records, with their bound parameters; undefined when one cannot be
 * read in the pass (a shifted twin whose period axes do not move by whole keys).
 */
export function planTwins(
  twins: readonly PivotTwin[] | undefined,
  spec: CrosstabSpec,
  columnTypes: ReadonlyMap<string, string>,
): { twins: PlanTwin[]; params: Record<string, DuckDBValue> } | undefined {
  // A median's twin is a second median over nearly every record: as costly as the pass apart, so holistic
  // totals keep their own passes (the FILTER measured twice the pass's time).
  if (!twins?.length || spec.shift || spec.totals.some((t) => t.aggregation && HOLISTIC.has(t.aggregation)))
    return undefined;
  const params: Record<string, DuckDBValue> = {};
  const out: PlanTwin[] = [];
  for (const [k, tw] of twins.entries()) {
    if (tw.of === 'shifted') {
      if (!tw.shift.onKeys) return undefined;
      const cut = shiftCut({ shift: tw.shift, timeZone: spec.timeZone }, columnTypes, `__tw${k}`);
      if (!cut.length) return undefined;
      Object.assign(params, ...cut.map((c) => c.params));
      out.push({ sql: cut[0].flag, totals: new Set(tw.totals), moved: tw.shift });
    } else {
      const x = tw.exclusion;
      const m = notMemberSql(x.axis, x.values, columnTypes, spec.timeZone, `__tw${k}`);
      Object.assign(params, m.params);
      out.push({ sql: m.sql, totals: new Set(spec.totals.map((_, i) => i)) });
    }
  }
  return { twins: out, params };
}
