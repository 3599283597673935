export {
  SnapshotEngine,
  type SnapshotRef,
  type LoadedTable,
  type Row,
  type SnapshotEngineOptions,
} from './snapshot-engine';
export {
  compileSearch,
  compileWhere,
  integerBound,
  type CompiledSearch,
  type CompiledWhere,
  type CompileContext,
} from './compile-duckdb';
export {
  learnSingleWordFields,
  MAX_LISTED_VALUES,
  type SingleWordFields,
  type SingleWordField,
} from './single-word-fields';
export {
  buildSnapshot,
  pruneSnapshots,
  type BuildRequest,
  type BuiltSnapshot,
  type LoadReport,
  type RejectedRow,
} from './build-snapshot';
export type { TypeNote } from './load/infer-columns';
export { ident, listParam, literal, recordJsonSql, wordsColumn, wordsExpr } from './sql';
export type { DuckDBValue } from '@duckdb/node-api';
export { readableIndex, fieldsOf } from './index-access';
export { processMemoryBytes, defaultDuckDbMemoryBytes, engineOptions, exportEngineOptions } from './memory-budget';
export { ATTACH_MIN_RECORDS, attachableFile } from './attachable-snapshot';
export { JsTurns } from './js-turns';
export { rebuildWithRollups } from './rebuild-rollups';
export {
  ROLLUP_COUNT,
  rollupCountColumn,
  rollupFields,
  rollupKeyFields,
  rollupMaxColumn,
  rollupMinColumn,
  rollupSumColumn,
  type BuiltRollup,
} from './rollup-tables';
export { VersionTerms, TERMS_TABLE, TEXT_STATS_TABLE, wordCountSql } from './text-terms';
