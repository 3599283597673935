import path from 'node:path';
import { Client } from 'typesense';
import type { IndexEntry } from '@quarry/metadata-store';
import { words } from '@quarry/query-language';
import { ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import type { SearchIndex, SearchPage, SearchPlan } from '../ports/search-index.port';
import { toFilterBy, toSortBy, wordPairs, type FieldSlot } from './typesense-filter';

const TS_TYPES: Record<string, string> = { integer: 'int64', number: 'float', boolean: 'bool', date: 'int64', string: 'string' };
const IMPORT_BATCH = 5000;
// Typesense returns at most 250 hits per request.
const HITS_PER_REQUEST = 250;

function slotsOf(entry: IndexEntry): Map<string, FieldSlot> {
  return new Map(entry.fields.map((f, slot) => [f.name, { ...f, slot }]));
}

/** One collection per snapshot; the alias named after the index follows the published one. */
export function collectionName(entry: Pick<IndexEntry, 'name' | 'snapshot'>): string {
  return `${entry.name}__${path.basename(entry.snapshot, '.parquet')}`;
}

/**
 * Production search on Typesense. Text matching uses Quarry's own word split (stored per document),
 * not Typesense's tokenizer, and no typo tolerance, so results match the DuckDB adapter's.
 */
export class TypesenseSearchIndex implements SearchIndex {
  private readonly client: Client;

  constructor(
    settings: { url: string; apiKey: string },
    private readonly engine: SnapshotEngine,
  ) {
    const url = new URL(settings.url);
    this.client = new Client({
      nodes: [{ host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)), protocol: url.protocol.replace(':', '') }],
      apiKey: settings.apiKey,
      connectionTimeoutSeconds: 10,
      numRetries: 2,
    });
  }

  async prepare(entry: IndexEntry): Promise<void> {
    const name = collectionName(entry);
    const fields: Array<Record<string, unknown>> = [{ name: '__rowid', type: 'int64', sort: true }, { name: '__json', type: 'string', index: false, optional: true }];
    entry.fields.forEach((f, i) => {
      fields.push({ name: `h${i}`, type: 'bool' });
      if (f.type === 'string') {
        fields.push({ name: `l${i}`, type: 'string', sort: true, optional: true });
        fields.push({ name: `w${i}`, type: 'string[]' });
        fields.push({ name: `b${i}`, type: 'string[]' });
      } else {
        fields.push({ name: `v${i}`, type: TS_TYPES[f.type], sort: f.type !== 'boolean', optional: true });
      }
    });
    await this.client.collections().create({ name, fields, default_sorting_field: '__rowid' } as never);
    const { table, columnTypes } = await this.engine.table(entry);
    const select = entry.fields
      .map((f) => (f.type === 'date' ? `CAST(epoch_ms(CAST(${ident(f.name)} AS TIMESTAMP)) AS BIGINT) AS ${ident(f.name)}` : ident(f.name)))
      .join(', ');
    for (let offset = 0; ; offset += IMPORT_BATCH) {
      const rows = await this.engine.all(
        `SELECT __rowid, ${select}, ${recordJsonSql(entry.fields, columnTypes)} AS __json FROM ${ident(table)} ORDER BY __rowid LIMIT ${IMPORT_BATCH} OFFSET ${offset}`,
      );
      if (rows.length === 0) break;
      const docs = rows.map((r) => {
        const doc: Record<string, unknown> = { id: String(r.__rowid), __rowid: Number(r.__rowid), __json: String(r.__json) };
        entry.fields.forEach((f, i) => {
          const v = r[f.name];
          const has = v !== null && v !== undefined && v !== '';
          doc[`h${i}`] = has;
          if (f.type === 'string') {
            const ws = has ? words(String(v)) : [];
            doc[`w${i}`] = ws;
            doc[`b${i}`] = wordPairs(ws);
            if (has) doc[`l${i}`] = String(v).toLowerCase();
          } else if (has) {
            doc[`v${i}`] = typeof v === 'bigint' ? Number(v) : v;
          }
        });
        return doc;
      });
      const results = await this.client.collections(name).documents().import(docs, { action: 'create' });
      const failed = results.find((x) => !x.success);
      if (failed) throw new Error(`Typesense refused a document: ${failed.error ?? 'unknown error'}`);
    }
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    const slots = slotsOf(entry);
    const filter_by = toFilterBy(plan.where, slots);
    const sort_by = toSortBy(plan.sort, slots);
    const records: string[] = [];
    let total = 0;
    let offset = plan.offset;
    let remaining = plan.limit;
    do {
      const limit = Math.min(remaining, HITS_PER_REQUEST);
      const res = await this.client
        .collections(collectionName(entry))
        .documents()
        .search({ q: '*', query_by: '', filter_by, sort_by, offset, limit, num_typos: 0, include_fields: '__json', exhaustive_search: true } as never);
      total = res.found;
      const hits = res.hits ?? [];
      for (const h of hits) records.push(String((h.document as Record<string, unknown>).__json));
      offset += hits.length;
      remaining -= hits.length;
      if (hits.length < limit) break;
    } while (remaining > 0);
    return { total, recordsJson: `[${records.join(',')}]` };
  }

  async retire(current: IndexEntry, previous: IndexEntry | null): Promise<void> {
    await this.client.aliases().upsert(current.name, { collection_name: collectionName(current) });
    if (previous) await this.client.collections(collectionName(previous)).delete().catch(() => undefined);
  }

  async drop(entry: IndexEntry): Promise<void> {
    await this.client.aliases(entry.name).delete().catch(() => undefined);
    await this.client.collections(collectionName(entry)).delete().catch(() => undefined);
  }

  async close(): Promise<void> {}
}
