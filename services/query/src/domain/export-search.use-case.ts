import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog } from '@quarry/metadata-store';
import { FieldResolver, hasScoringClauses, parseQuery, restrictedTree, type Reader } from '@quarry/query-language';
import { SCORE_FIELD } from '@quarry/contract';
import { fieldsOf, readableIndex } from '@quarry/snapshots/access';
import type { SearchExporter, SearchExportFormat } from '../ports/search-exporter.port';
import type { SortKey } from '../ports/search-index.port';

export interface ExportSearchInput {
  index: string;
  query: string;
  sort: Array<{ field: string; direction: 'asc' | 'desc' }>;
  asOfVersion?: number;
}

export interface ExportSearchOptions {
  signal?: AbortSignal;
  /** Runs the engine call under the process's cap on heavy calls. */
  heavy?: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * A search's every matching record, for an export: the same index access, realms and sort as
 * QUERIES.EXECUTE, without a page. `count` is what the gateway checks against its row limit first.
 */
export class ExportSearchUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly exporter: SearchExporter,
    private readonly now: () => number = Date.now,
  ) {}

  async count(reader: Reader, input: ExportSearchInput, opts: ExportSearchOptions = {}): Promise<number> {
    const { entry, where } = await this.plan(reader, input);
    const run = () => this.exporter.count(entry, where, opts.signal);
    return opts.heavy ? opts.heavy(run) : run();
  }

  async write(
    reader: Reader,
    input: ExportSearchInput,
    format: SearchExportFormat,
    path: string,
    opts: ExportSearchOptions = {},
  ): Promise<number> {
    const { entry, where, score, sort } = await this.plan(reader, input);
    const run = () =>
      this.exporter.write(entry, { where, ...(score ? { score } : {}), sort, format, path, signal: opts.signal });
    return opts.heavy ? opts.heavy(run) : run();
  }

  private async plan(reader: Reader, input: ExportSearchInput) {
    const entry = await readableIndex(this.catalog, reader, input.index, { version: input.asOfVersion });
    const fields = fieldsOf(entry);
    const parse = { fields, now: this.now() };
    const user = parseQuery(input.query, parse);
    const where = restrictedTree(reader, entry.name, user, parse);
    const resolver = new FieldResolver(fields);
    const explicit: SortKey[] = input.sort.map((s, i) => {
      if (s.field === SCORE_FIELD) return { field: SCORE_FIELD, type: 'score', direction: s.direction };
      const field = resolver.find(s.field);
      if (!field) throw AppError.invalid(`sort[${i}].field: unknown field ${quoteInput(s.field)}`);
      return { field: field.name, type: field.type, direction: s.direction };
    });
    // The search's own order: ranked as QUERIES.EXECUTE ranks it.
    const ranked = explicit.length === 0 && hasScoringClauses(user);
    const sort: SortKey[] = ranked ? [{ field: SCORE_FIELD, type: 'score', direction: 'desc' }] : explicit;
    const score = ranked || explicit.some((s) => s.type === 'score') ? user : undefined;
    return { entry, where, score, sort };
  }
}
