import { randomBytes } from 'node:crypto';
import { AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { words } from '@quarry/query-language';
import { ident, recordJsonSql, type Row, type SnapshotEngine } from '@quarry/snapshots';
import {
  booleanKey,
  dateKey,
  doubleKey,
  EVERY_RECORD_TOKEN,
  facetText,
  fieldTag,
  integerKey,
  rankToken,
  textTokens,
} from './typesense-encoding';
import type { FieldSlot } from './typesense-filter';

/**
 * Collection fields for an index (layout in typesense-filter.ts). Every key and rank is int64 and
 * sortable; keys of numbers, integers and booleans are facets too (their values decode exactly), text
 * and dates have a string facet of their own (`f{slot}`: a rank folds case, a key has more precision
 * than a date's facet value), and text its words once more, in order, for the ranked `q` (`t{slot}`).
 */
export function collectionFields(slots: readonly FieldSlot[]): Array<Record<string, unknown>> {
  const fields: Array<Record<string, unknown>> = [
    { name: '__rowid', type: 'int64', sort: true },
    // Un-indexed fields must be optional in Typesense.
    { name: '__json', type: 'string', index: false, optional: true },
    { name: '__has', type: 'string[]', optional: true },
    { name: '__q', type: 'string' },
  ];
  if (slots.some((s) => s.type === 'string')) {
    for (const name of ['__w', '__b', '__r', '__p']) fields.push({ name, type: 'string[]', optional: true });
  }
  for (const s of slots) {
    if (s.type === 'string') {
      fields.push({ name: `r${s.slot}`, type: 'int64', sort: true, optional: true });
      fields.push({ name: `t${s.slot}`, type: 'string', optional: true });
      fields.push({ name: `f${s.slot}`, type: 'string', facet: true, optional: true });
    } else if (s.type === 'date') {
      fields.push({ name: `k${s.slot}`, type: 'int64', sort: true, optional: true });
      fields.push({ name: `f${s.slot}`, type: 'string', facet: true, optional: true });
    } else fields.push({ name: `k${s.slot}`, type: 'int64', sort: true, facet: true, optional: true });
  }
  return fields;
}

/** One record as read from the snapshot: values in slot order (dates as epoch microseconds). */
export interface SourceRecord {
  rowid: number;
  values: ReadonlyArray<unknown>;
  /** Rank of each text value in the engine's text order, by slot; null where the value is missing. */
  ranks: ReadonlyArray<number | null>;
  /** A date's value as a facet shows it (the embedded engine's text of it), by slot; null elsewhere. */
  dateTexts?: ReadonlyArray<string | null>;
  json: string;
}

function asBigInt(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw AppError.internal(`Unexpected ${what} value ${String(v)}`);
}

function keyOf(slot: FieldSlot, v: unknown): bigint {
  switch (slot.type) {
    case 'integer':
      return integerKey(asBigInt(v, 'integer'));
    case 'number':
      if (typeof v !== 'number') throw AppError.internal(`Unexpected number value ${String(v)}`);
      return doubleKey(v);
    case 'date':
      return dateKey(asBigInt(v, 'date'));
    case 'boolean':
      return booleanKey(v === true);
    case 'string':
      throw AppError.internal('Text values have ranks, not keys');
  }
}

/**
 * One JSONL line for Typesense. Written by hand because keys are int64 and JSON.stringify cannot
 * write a bigint: the digits go out exactly, and Typesense reads them as int64.
 */
export function documentLine(record: SourceRecord, slots: readonly FieldSlot[]): string {
  const parts: string[] = [
    `"id":${JSON.stringify(String(record.rowid))}`,
    `"__rowid":${record.rowid}`,
    `"__json":${JSON.stringify(record.json)}`,
    `"__q":${JSON.stringify(EVERY_RECORD_TOKEN)}`,
  ];
  const has: string[] = [];
  const w = new Set<string>();
  const b = new Set<string>();
  const r = new Set<string>();
  const p = new Set<string>();
  for (const slot of slots) {
    const v = record.values[slot.slot];
    if (v === null || v === undefined) continue;
    if (slot.type === 'string') {
      const text = String(v);
      if (text !== '') has.push(fieldTag(slot.slot));
      const split = words(text);
      const t = textTokens(slot.slot, split);
      if (split.length > 0) parts.push(`"t${slot.slot}":${JSON.stringify(split.map(rankToken).join(' '))}`);
      // Blank text is no facet value: it counts with the missing ones, as `(blank)`.
      if (text !== '') parts.push(`"f${slot.slot}":${JSON.stringify(facetText(text))}`);
      t.words.forEach((x) => w.add(x));
      t.pairs.forEach((x) => b.add(x));
      t.runs.forEach((x) => r.add(x));
      t.prefixes.forEach((x) => p.add(x));
      const rank = record.ranks[slot.slot];
      if (rank !== null && rank !== undefined) parts.push(`"r${slot.slot}":${rank}`);
    } else {
      has.push(fieldTag(slot.slot));
      parts.push(`"k${slot.slot}":${keyOf(slot, v).toString()}`);
      const dateText = record.dateTexts?.[slot.slot];
      if (slot.type === 'date' && dateText !== null && dateText !== undefined)
        parts.push(`"f${slot.slot}":${JSON.stringify(dateText)}`);
    }
  }
  const arrays: Array<[string, string[]]> = [
    ['__has', has],
    ['__w', [...w]],
    ['__b', [...b]],
    ['__r', [...r]],
    ['__p', [...p]],
  ];
  for (const [name, values] of arrays)
    if (values.length > 0) parts.push(`${JSON.stringify(name)}:${JSON.stringify(values)}`);
  return `{${parts.join(',')}}`;
}

/** A date as the embedded engine's facets show it (search-sql.ts facetsSql): a day, or a time to the second. */
export function dateFacetSql(name: string, columnType: string | undefined): string {
  const col = ident(name);
  if (columnType === 'DATE') return `strftime(${col}, '%Y-%m-%d')`;
  if (columnType?.startsWith('TIMESTAMP')) return `strftime(${col}, '%Y-%m-%dT%H:%M:%S')`;
  return `CAST(${col} AS VARCHAR)`;
}

export interface DocumentBatch {
  rowids: number[];
  jsonl: string;
}

/**
 * The snapshot as JSONL batches in record order, read by keyset (`__rowid > last`), so each batch
 * costs the same however deep it is. Text ranks are computed once, in the engine that defines the
 * text order (lower-cased, as the embedded adapter sorts), into a scratch table read alongside.
 * Checks that record n has __rowid n: deep pages of the whole index rely on it.
 */
export async function* documentBatches(
  engine: SnapshotEngine,
  entry: IndexEntry,
  slots: readonly FieldSlot[],
  batchSize: number,
): AsyncGenerator<DocumentBatch> {
  const { table, columnTypes } = await engine.table(entry);
  const text = slots.filter((s) => s.type === 'string');
  const select = slots
    .map((s) => {
      const col = ident(s.name);
      const expr = s.type === 'date' ? `epoch_us(CAST(${col} AS TIMESTAMP))` : col;
      const out = `${expr} AS ${ident(`c${s.slot}`)}`;
      return s.type === 'date'
        ? `${out}, ${dateFacetSql(s.name, columnTypes.get(s.name))} AS ${ident(`d${s.slot}`)}`
        : out;
    })
    .join(', ');
  const ranks = `__typesense_ranks_${randomBytes(6).toString('hex')}`;
  if (text.length > 0) {
    const rankCols = text.map(
      (s) =>
        `CASE WHEN ${ident(s.name)} IS NULL THEN NULL ELSE dense_rank() OVER (ORDER BY lower(${ident(s.name)})) END AS ${ident(`r${s.slot}`)}`,
    );
    await engine.all(
      `CREATE TABLE ${ident(ranks)} AS SELECT __rowid, ${rankCols.join(', ')} FROM ${ident(table)} ORDER BY __rowid`,
    );
  }
  try {
    let last = -1n;
    let expected = 0;
    for (;;) {
      const rows = await engine.all(
        `SELECT __rowid, ${select}${select ? ', ' : ''}${recordJsonSql(entry.fields, columnTypes)} AS __json FROM ${ident(table)} WHERE __rowid > $last ORDER BY __rowid LIMIT ${batchSize}`,
        { last },
      );
      if (rows.length === 0) break;
      const hi = asBigInt(rows[rows.length - 1].__rowid, 'row number');
      const rankRows: Row[] =
        text.length > 0
          ? await engine.all(
              `SELECT * FROM ${ident(ranks)} WHERE __rowid > $last AND __rowid <= $hi ORDER BY __rowid`,
              { last, hi },
            )
          : [];
      const rowids: number[] = [];
      const lines = rows.map((r, i) => {
        const rowid = Number(asBigInt(r.__rowid, 'row number'));
        if (rowid !== expected)
          throw AppError.internal(
            `The snapshot of index "${entry.name}" numbers record ${expected + 1} as ${rowid + 1}`,
          );
        expected++;
        const rankRow = rankRows[i];
        if (text.length > 0 && Number(asBigInt(rankRow?.__rowid, 'row number')) !== rowid)
          throw AppError.internal('Text ranks out of step with the records');
        rowids.push(rowid);
        return documentLine(
          {
            rowid,
            values: slots.map((s) => r[`c${s.slot}`]),
            ranks: slots.map((s) =>
              s.type === 'string' && rankRow[`r${s.slot}`] !== null
                ? Number(asBigInt(rankRow[`r${s.slot}`], 'rank'))
                : null,
            ),
            dateTexts: slots.map((s) =>
              s.type === 'date' && r[`d${s.slot}`] != null ? String(r[`d${s.slot}`]) : null,
            ),
            json: String(r.__json),
          },
          slots,
        );
      });
      yield { rowids, jsonl: lines.join('\n') };
      last = hi;
    }
    if (expected !== entry.recordCount)
      throw AppError.internal(
        `The snapshot of index "${entry.name}" has ${expected} records, the catalog says ${entry.recordCount}`,
      );
  } finally {
    if (text.length > 0) await engine.all(`DROP TABLE IF EXISTS ${ident(ranks)}`).catch(() => undefined);
  }
}
