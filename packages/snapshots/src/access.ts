// `@quarry/snapshots/access`: who may read which index, for domain code that must not load DuckDB
// through the package's main entry.
export { readableIndex, fieldsOf } from './index-access';
