import type { Config } from '@quarry/config';
import { AppError } from '@quarry/errors';
import type { IndexCatalog, IndexEntry, RollupDef } from '@quarry/metadata-store';
import { createSearchIndex, LoadIndexUseCase } from '@quarry/query';
import { DuckDbSnapshotBuilder } from '@quarry/query/duckdb';
import { engineOptions, SnapshotEngine } from '@quarry/snapshots';
import type { AuditLog } from '@quarry/metadata-store';
import { describeRollup, parseRollup, type RollupOptions } from './parse-rollup';
import { suggestRollups } from './suggest-rollups';

async function changeRollups(
  config: Config,
  catalog: IndexCatalog,
  name: string,
  change: (current: IndexEntry) => RollupDef[],
): Promise<IndexEntry> {
  const engine = new SnapshotEngine(config.dataDir, engineOptions(config));
  try {
    return await new LoadIndexUseCase(
      new DuckDbSnapshotBuilder(config.dataDir),
      catalog,
      createSearchIndex(config, engine, 'load'),
    ).changeRollups(name, change);
  } finally {
    await engine.close();
  }
}

/** `quarry index rollup add`: the rollup is built at once, on the current version's records. */
export async function addRollup(config: Config, catalog: IndexCatalog, name: string, opts: RollupOptions) {
  let added: RollupDef | undefined;
  const started = Date.now();
  const entry = await changeRollups(config, catalog, name, (current) => {
    added = parseRollup(current, opts);
    return [...(current.rollups ?? []), added];
  });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  return `rollup ${added?.name} built in ${secs} s: published ${entry.name} version ${entry.version} (the same ${entry.recordCount} records); every later load builds it too`;
}

/** `quarry index rollup drop`: later crosstabs scan; ones already running finish on the rollup. */
export async function dropRollup(config: Config, catalog: IndexCatalog, name: string, rollup: string) {
  const entry = await changeRollups(config, catalog, name, (current) => {
    const kept = current.rollups ?? [];
    if (!kept.some((r) => r.name === rollup))
      throw AppError.notFound(
        `Index "${name}" has no rollup "${rollup.slice(0, 100)}"${kept.length ? ` (it has ${kept.map((r) => r.name).join(', ')})` : ''}`,
      );
    return kept.filter((r) => r.name !== rollup);
  });
  return `dropped rollup ${rollup}: published ${entry.name} version ${entry.version}`;
}

/** `quarry index rollup list`: one line per rollup, as the options that would add it. */
export async function listRollups(catalog: IndexCatalog, name: string): Promise<string> {
  const entry = await catalog.getIndex(name);
  if (!entry) throw AppError.notFound(`Index "${name}" not found`);
  const rollups = entry.rollups ?? [];
  return rollups.length ? rollups.map(describeRollup).join('\n') : `index ${name} has no rollups`;
}

/** `quarry index rollup suggest`: rollups proposed from the crosstabs in the audit trail. */
export async function suggest(store: IndexCatalog & AuditLog, name: string): Promise<string> {
  const entry = await store.getIndex(name);
  if (!entry) throw AppError.notFound(`Index "${name}" not found`);
  return suggestRollups(store, entry);
}
