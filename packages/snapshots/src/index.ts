export { SnapshotEngine, type SnapshotRef, type LoadedTable, type Row } from './snapshot-engine';
export { compileWhere, type CompiledWhere } from './compile-duckdb';
export { buildSnapshot, pruneSnapshots, INDEX_NAME, type BuildRequest, type BuiltSnapshot } from './build-snapshot';
export { ident, literal, recordJsonSql, wordsColumn, wordsExpr } from './sql';
export { readableIndex, fieldsOf } from './index-access';
