import { seededRandom } from './indexed-records';

/** A crosstab's JSON table as the Other tests read it. */
export type Key = Array<string | number | boolean | null>;
export type Values = Array<number | null>;
export interface OtherTable {
  columns: Key[];
  rows: Array<{ key: Key; cells: Values[]; total: Values; subtotal?: true; other?: number }>;
  columnTotals: Values[];
  grandTotal: Values;
  otherColumn?: number;
}

/**
 * Generated tickets, a fixed pseudo-random sequence (the same records every run): teams skewed so that
 * they differ in size (one past the list is the blank team), regions less so, some hours missing, and
 * with `blankAgentEvery` some agents blank.
 */
export function ticketRecords(o: {
  seed: number;
  count: number;
  teams: readonly string[];
  priorities: readonly string[];
  regions: readonly string[];
  channels: readonly string[];
  agents: number;
  noHoursEvery: number;
  blankAgentEvery?: number;
}): Array<Record<string, unknown>> {
  const next = seededRandom(o.seed);
  return Array.from({ length: o.count }, (_, i) => {
    const t = Math.floor(next() ** 2 * (o.teams.length + 1));
    return {
      id: i,
      team: t === o.teams.length ? '' : o.teams[t],
      priority: o.priorities[Math.floor(next() * o.priorities.length)],
      region: o.regions[Math.floor(next() ** 1.5 * o.regions.length)],
      hours: i % o.noHoursEvery === 0 ? null : Math.round(next() * 10000) / 100,
      agent: o.blankAgentEvery && i % o.blankAgentEvery === 0 ? '' : `A${Math.floor(next() * o.agents)}`,
      channel: o.channels[Math.floor(next() * o.channels.length)],
    };
  });
}
