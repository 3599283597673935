// The production search engine's entry point (`@quarry/query/typesense`); see duckdb.ts.
export { TypesenseSearchIndex } from './adapters/typesense/typesense-search-index.adapter';
