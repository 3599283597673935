import { AppError } from '@quarry/errors';
import type { IndexCatalog } from '@quarry/metadata-store';
import { FieldResolver, restrictedQuery, type FieldDef, type Reader } from '@quarry/query-language';
import type { SearchIndex, SortKey } from '../ports/search-index.port';
import { fieldsOf, readableIndex } from '@quarry/snapshots';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export interface ExecuteQueryInput {
  index: string;
  query: string;
  page?: number;
  pageSize?: number;
  sort: Array<{ field: string; direction: string }>;
}

export interface ExecuteQueryOutput {
  index: string;
  query: string;
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
  fields: FieldDef[];
  recordsJson: string;
}

function sortKeys(fields: FieldResolver, sort: ExecuteQueryInput['sort']): SortKey[] {
  return sort.map((s, i) => {
    const field = fields.find(s.field);
    if (!field) throw AppError.invalid(`sort[${i}].field: unknown field "${s.field}"`);
    const direction = (s.direction === '' ? 'asc' : s.direction.toLowerCase()) as SortKey['direction'];
    if (direction !== 'asc' && direction !== 'desc') throw AppError.invalid(`sort[${i}].direction must be "asc" or "desc", got "${s.direction}"`);
    return { field: field.name, type: field.type, direction };
  });
}

/** QUERIES.EXECUTE: permissions, the query with the caller's realms, paging and sorting. */
export class ExecuteQueryUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly search: SearchIndex,
    private readonly now: () => number = Date.now,
  ) {}

  async execute(reader: Reader, input: ExecuteQueryInput): Promise<ExecuteQueryOutput> {
    const page = input.page ?? 1;
    const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(page) || page < 1) throw AppError.invalid('page must be an integer of at least 1');
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw AppError.invalid(`pageSize must be an integer between 1 and ${MAX_PAGE_SIZE}`);
    }
    const entry = await readableIndex(this.catalog, reader, input.index);
    const fields = fieldsOf(entry);
    const where = restrictedQuery(reader, entry.name, input.query, { fields, now: this.now() });
    const sort = sortKeys(new FieldResolver(fields), input.sort);
    const offset = (page - 1) * pageSize;
    const result = await this.search.search(entry, { where, sort, offset, limit: pageSize });
    return {
      index: entry.name,
      query: input.query.trim() === '' ? '*' : input.query,
      page,
      pageSize,
      total: result.total,
      totalPages: Math.ceil(result.total / pageSize),
      fields,
      recordsJson: result.recordsJson,
    };
  }
}
