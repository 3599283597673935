import path from 'node:path';
import { AppError, isAppError, quoteInput } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import type { RawFacet } from './typesense-facets';

/*
 * What the adapter must know of Typesense's requests and answers, as pure functions (Typesense v28.0
 * and typesense-js 2.1.0 sources).
 */

/** Hits per search: Typesense refuses more (`max_per_page`, 250 by default, include/tsconfig.h). */
export const HITS_PER_REQUEST = 250;
/**
 * Typesense serves hits up to `limit_hits` (1,000,000 by default, src/collection.cpp) and keeps
 * offset + limit hits in memory per search, so this is also where offset paging stops.
 */
export const DEFAULT_MAX_HITS = 1_000_000;

/**
 * How one page is fetched:
 * - `offset`: searches of at most HITS_PER_REQUEST hits at these offsets;
 * - `rowid`: the whole index in record order past maxHits: record n has __rowid n (checked at load),
 *   so the page is a __rowid range and needs no deep offset;
 * - `beyond`: a filtered or sorted page past maxHits, which Typesense cannot serve. The adapter
 *   counts the matches: a page past the end is empty as usual, any other is refused.
 */
export type PagePlan =
  | { kind: 'offset'; requests: Array<{ offset: number; limit: number }> }
  | { kind: 'rowid'; requests: Array<{ from: number; to: number }> }
  | { kind: 'beyond' };

export function planPage(
  offset: number,
  limit: number,
  options: { maxHits: number; allInRecordOrder: boolean },
): PagePlan {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(limit) || limit < 0) {
    throw AppError.internal(`Invalid page window ${offset}+${limit}`);
  }
  const chunks = (start: number): Array<{ start: number; size: number }> => {
    const out: Array<{ start: number; size: number }> = [];
    for (let done = 0; done < limit; done += HITS_PER_REQUEST)
      out.push({ start: start + done, size: Math.min(HITS_PER_REQUEST, limit - done) });
    return out;
  };
  // A search is still needed for the total.
  if (limit === 0) return { kind: 'offset', requests: [{ offset: 0, limit: 0 }] };
  if (offset + limit <= options.maxHits)
    return { kind: 'offset', requests: chunks(offset).map((c) => ({ offset: c.start, limit: c.size })) };
  if (options.allInRecordOrder)
    return { kind: 'rowid', requests: chunks(offset).map((c) => ({ from: c.start, to: c.start + c.size - 1 })) };
  return { kind: 'beyond' };
}

export function beyondMaxHits(maxHits: number): AppError {
  return AppError.invalid(
    `The Typesense search backend serves the first ${maxHits.toLocaleString('en-US')} matches of a filtered or sorted query; narrow the query to reach later pages`,
  );
}

/** One collection per snapshot; the alias named after the index follows the published one. */
export function collectionName(entry: Pick<IndexEntry, 'name' | 'snapshot'>): string {
  return `${entry.name}__${path.basename(entry.snapshot, '.parquet')}`;
}

/**
 * Collections of `index` to delete at a publish: all but the ones kept (the current and previous
 * versions, which readers may still name). Snapshot ids have no `_`, so another index whose name
 * starts with this one's and `__` never matches.
 */
export function staleCollections(all: readonly string[], index: string, keep: readonly string[]): string[] {
  const prefix = `${index}__`;
  return all.filter((c) => c.startsWith(prefix) && /^[0-9a-z-]+$/.test(c.slice(prefix.length)) && !keep.includes(c));
}

interface ImportLine {
  success?: unknown;
  error?: unknown;
}

/**
 * Checks Typesense's answer to one import: one JSON line per document, in order. Documents go in as
 * JSONL text (int64 keys beyond 2^53 need their exact digits), for which typesense-js returns the raw
 * lines and throws nothing (Documents.ts import), so every line is checked here, and so is their count.
 */
export function checkImport(response: string, rowids: readonly number[]): void {
  const lines = response.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== rowids.length) {
    throw AppError.internal(`Typesense answered ${lines.length} results for an import of ${rowids.length} documents`);
  }
  const failed: Array<{ record: number; error: string }> = [];
  lines.forEach((line, i) => {
    let parsed: ImportLine;
    try {
      parsed = JSON.parse(line) as ImportLine;
    } catch {
      failed.push({ record: rowids[i] + 1, error: `unreadable answer ${quoteInput(line)}` });
      return;
    }
    if (parsed.success !== true)
      failed.push({ record: rowids[i] + 1, error: quoteInput(String(parsed.error ?? 'no reason given')) });
  });
  if (failed.length > 0) {
    const first = failed[0];
    throw AppError.internal(
      `Typesense refused ${failed.length} of ${rowids.length} records; first, record ${first.record}: ${first.error}`,
    );
  }
}

export interface SearchResult {
  found: number;
  /** The `__json` of each hit, in order. */
  records: string[];
  /** Each hit's text match, when the search had words to match (`q` other than `*`). */
  scores?: number[];
  /** The answer's `facet_counts`, as given. */
  facets: RawFacet[];
}

interface RawHit {
  document?: Record<string, unknown>;
  text_match?: unknown;
  text_match_info?: { score?: unknown };
}

interface RawSearchResult {
  found?: unknown;
  hits?: RawHit[];
  facet_counts?: unknown;
  search_cutoff?: unknown;
  error?: unknown;
  code?: unknown;
}

/**
 * A hit's text match: `text_match_info.score` carries its digits (a 64-bit number, past what a JSON
 * number keeps exactly); `text_match` is the same number, read when the info is absent.
 */
function textMatch(hit: RawHit): number | undefined {
  const info = hit.text_match_info?.score;
  if (typeof info === 'string' && /^\d+$/.test(info)) return Number(BigInt(info));
  return typeof hit.text_match === 'number' ? hit.text_match : undefined;
}

/**
 * Reads a multi_search answer. A search that fails is reported inside the answer, not as an HTTP
 * error (src/core_api.cpp post_multi_search), and a search that ran out of time returns what it had
 * found with `search_cutoff` set: both become errors here, never a short page. `ranked`: whether the
 * searches had words, whose text match each hit then carries.
 */
export function readSearchResults(response: { results?: unknown }, expected: number, ranked = false): SearchResult[] {
  const results = response.results;
  if (!Array.isArray(results) || results.length !== expected) {
    throw AppError.internal(
      `Typesense answered ${Array.isArray(results) ? results.length : 'no'} results for ${expected} searches`,
    );
  }
  return results.map((raw: RawSearchResult) => {
    if (raw.error !== undefined || raw.code !== undefined) {
      const detail = quoteInput(String(raw.error ?? 'no reason given'));
      // A collection without a field a search names answers 404 too: it was loaded before the layout
      // had that field (ranking and facets read `__q`, `t{i}` and `f{i}`), and only a new load adds it.
      if (raw.code === 404 && /field/i.test(String(raw.error ?? ''))) {
        throw AppError.unavailable(
          `This version of the index was loaded into Typesense before it could rank or count facets (${detail}); load the index again`,
        );
      }
      if (raw.code === 404) {
        throw AppError.unavailable(
          `This version of the index is no longer held by the search backend (it was replaced or dropped); retry`,
        );
      }
      throw AppError.internal(`Typesense refused the search (${String(raw.code)}): ${detail}`);
    }
    if (raw.search_cutoff === true)
      throw AppError.timeout('The search backend ran out of time before it finished the search');
    if (typeof raw.found !== 'number') throw AppError.internal('Typesense answered a search without a count');
    const hits = raw.hits ?? [];
    const records = hits.map((h) => {
      const json = h.document?.__json;
      if (typeof json !== 'string') throw AppError.internal('Typesense answered a hit without its record');
      return json;
    });
    const facets = Array.isArray(raw.facet_counts) ? (raw.facet_counts as RawFacet[]) : [];
    if (!ranked) return { found: raw.found, records, facets };
    const scores = hits.map((h) => {
      const score = textMatch(h);
      if (score === undefined) throw AppError.internal('Typesense answered a ranked hit without its text match');
      return score;
    });
    return { found: raw.found, records, scores, facets };
  });
}

/**
 * An error from a typesense-js call as an AppError. HTTP errors carry `httpStatus` (Errors/TypesenseError.ts);
 * an error without one never got an answer from Typesense.
 */
export function backendError(err: unknown, doing: string): AppError {
  if (isAppError(err)) return err;
  const status =
    typeof err === 'object' && err !== null && 'httpStatus' in err && typeof err.httpStatus === 'number'
      ? err.httpStatus
      : undefined;
  if (status === undefined) return AppError.unavailable(`The search backend did not answer while ${doing}`, err);
  if (status === 408) return AppError.timeout(`The search backend ran out of time while ${doing}`, err);
  if (status === 429) return AppError.overloaded(`The search backend is overloaded (${doing}); retry shortly`, 1);
  if (status >= 500) return AppError.unavailable(`The search backend failed while ${doing} (HTTP ${status})`, err);
  const message = err instanceof Error ? err.message : String(err);
  return AppError.internal(
    `The search backend refused a request while ${doing} (HTTP ${status}): ${quoteInput(message)}`,
    err,
  );
}
