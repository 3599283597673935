import { searchIndexConformance } from '../search-index.conformance';
import { DuckDbSearchIndex } from './duckdb-search-index.adapter';

describe('DuckDbSearchIndex conformance', () => {
  searchIndexConformance(async (engine) => new DuckDbSearchIndex(engine));
});
