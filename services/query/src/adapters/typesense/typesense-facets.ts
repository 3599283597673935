import { AppError } from '@quarry/errors';
import type { FacetCounts, FacetRequest } from '../../ports/search-index.port';
import { doubleFromKey, fieldTag, fromFacetText } from './typesense-encoding';
import type { FieldSlot, FieldSlots } from './typesense-filter';

/*
 * Facets on Typesense (v28.0). Counts are exact: the exhaustive strategy counts every match by facet
 * id, one per distinct value (src/facet_index.cpp), not by hash, and no sampling is asked for. What
 * Typesense does not give is done here:
 * - a missing value is no facet value: `(blank)` is counted by a search of its own (`__has` lacks the
 *   field's tag where the value is missing or blank text);
 * - among equal counts Typesense picks any (std::nth_element): the embedded engines list them by
 *   value, so when the values Typesense returned end on a count the listed ones reach, it is asked
 *   again for more, until the last count tied is whole (FACET_MAX_VALUES at most).
 */

/** What a facet shows for a missing value or blank text, as crosstabs do. */
export const BLANK = '(blank)';
/** Values one facet asks for at most when ties at its limit need more than the limit. */
export const FACET_MAX_VALUES = 10_000;

/** The collection field a field's facet is counted on (typesense-documents.ts). */
export function facetField(slot: FieldSlot): string {
  return slot.type === 'string' || slot.type === 'date' ? `f${slot.slot}` : `k${slot.slot}`;
}

/** Facet parameters of one search: every facet at once, exhaustive, unsampled. */
export function facetParams(
  fields: readonly FieldSlot[],
  maxValues: number,
): { facet_by: string; max_facet_values: number; facet_strategy: 'exhaustive'; facet_sample_percent: number } {
  return {
    facet_by: [...new Set(fields.map(facetField))].join(','),
    max_facet_values: maxValues,
    facet_strategy: 'exhaustive',
    facet_sample_percent: 100,
  };
}

/** The filter of the records a facet counts as `(blank)`: the search's matches without the field. */
export function blankFilter(filterBy: string | undefined, slot: FieldSlot): string {
  const missing = `__has:!=[${fieldTag(slot.slot)}]`;
  return filterBy === undefined ? missing : `(${filterBy}) && ${missing}`;
}

type FacetValue = FacetCounts['values'][number]['value'];

/** A facet value as Typesense answers it, decoded from the collection's encoding (typesense-encoding.ts). */
export function decodeFacetValue(slot: FieldSlot, raw: string): FacetValue {
  switch (slot.type) {
    case 'string':
      return fromFacetText(raw);
    case 'date':
      return raw;
    case 'integer': {
      const n = BigInt(raw);
      // As the embedded engine answers an integer beyond 2^53: its digits.
      return Number.isSafeInteger(Number(n)) ? Number(n) : n.toString();
    }
    case 'number':
      return doubleFromKey(BigInt(raw));
    case 'boolean':
      return raw === '1';
  }
}

interface Listed {
  value: FacetValue;
  count: number;
  blank: boolean;
}

/** The embedded engines' order of a facet's values: most frequent first, then by value, blank last. */
function compareValues(type: FieldSlot['type']): (a: Listed, b: Listed) => number {
  return (a, b) => {
    if (a.count !== b.count) return b.count - a.count;
    if (a.blank !== b.blank) return a.blank ? 1 : -1;
    switch (type) {
      case 'integer': {
        // Integers past 2^53 come as digits: compare them as the integers they are.
        const [x, y] = [BigInt(a.value), BigInt(b.value)];
        return x < y ? -1 : x > y ? 1 : 0;
      }
      case 'number':
      case 'boolean':
        return Number(a.value) - Number(b.value);
      default: {
        // Text by code point (DuckDB compares UTF-8 bytes); a date's text is in time order.
        const [p, q] = [Array.from(String(a.value)), Array.from(String(b.value))];
        for (let i = 0; i < Math.min(p.length, q.length); i++) {
          const d = (p[i].codePointAt(0) ?? 0) - (q[i].codePointAt(0) ?? 0);
          if (d !== 0) return d;
        }
        return p.length - q.length;
      }
    }
  };
}

export interface RawFacet {
  field_name?: unknown;
  counts?: Array<{ value?: unknown; count?: unknown }>;
  stats?: { total_values?: unknown };
}

/** One facet's values as Typesense answered them, and whether they are every value it holds. */
export interface FacetAnswer {
  values: Array<{ raw: string; count: number }>;
  /** Distinct values among the matches (Typesense's `stats.total_values`). */
  distinct: number;
}

export function readFacet(raw: RawFacet | undefined, field: string): FacetAnswer {
  if (!raw || !Array.isArray(raw.counts)) throw AppError.internal(`Typesense answered no facet counts for ${field}`);
  const values = raw.counts.map((c) => {
    if (typeof c.value !== 'string' || typeof c.count !== 'number')
      throw AppError.internal(`Typesense answered an unreadable facet count for ${field}`);
    return { raw: c.value, count: c.count };
  });
  const distinct = typeof raw.stats?.total_values === 'number' ? raw.stats.total_values : values.length;
  return { values, distinct };
}

/**
 * How many values to ask for again, or null when the answer settles the facet: Typesense returned
 * every value it holds, or fewer than asked, or its last count is below the count at `limit` (with
 * the blanks among them), so no value left out ties with a listed one.
 */
export function moreValuesNeeded(answer: FacetAnswer, asked: number, limit: number, blanks: number): number | null {
  if (answer.values.length < asked || answer.values.length >= answer.distinct || asked >= FACET_MAX_VALUES) return null;
  const counts = [...answer.values.map((v) => v.count), ...(blanks > 0 ? [blanks] : [])].sort((a, b) => b - a);
  const atLimit = counts[Math.min(limit, counts.length) - 1];
  const last = answer.values[answer.values.length - 1].count;
  if (last < atLimit) return null;
  return Math.min(FACET_MAX_VALUES, answer.distinct, asked * 4);
}

/**
 * A facet as the port gives it, from Typesense's values, the blanks among the matches and the matches
 * (`found`): the first `limit` in the embedded engines' order, `others` what they leave.
 */
export function facetCounts(
  request: FacetRequest,
  slot: FieldSlot,
  answer: FacetAnswer,
  blanks: number,
  found: number,
): FacetCounts {
  const all: Listed[] = answer.values.map((v) => ({
    value: decodeFacetValue(slot, v.raw),
    count: v.count,
    blank: false,
  }));
  if (blanks > 0) all.push({ value: BLANK, count: blanks, blank: true });
  all.sort(compareValues(slot.type));
  const values = all.slice(0, request.limit).map(({ value, count }) => ({ value, count }));
  return { field: request.field, values, others: found - values.reduce((s, v) => s + v.count, 0) };
}

/** The slots of the requested facets, refusing a field the index does not have. */
export function facetSlots(requests: readonly FacetRequest[], slots: FieldSlots): FieldSlot[] {
  return requests.map((r) => {
    const slot = slots.get(r.field);
    if (!slot) throw AppError.internal(`field ${r.field} has no Typesense slot`);
    return slot;
  });
}
