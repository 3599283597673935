import cliProgress from 'cli-progress';
import type { Config } from '@quarry/config';
import { AppError } from '@quarry/errors';
import type { IndexCatalog } from '@quarry/metadata-store';
import { parseDeclaredType, type DateGrain, type FieldType } from '@quarry/query-language';
import { createSearchIndex, DuckDbSnapshotBuilder, LoadIndexUseCase } from '@quarry/query';
import { SnapshotEngine } from '@quarry/snapshots';

function pairs(list: string[] | undefined, option: string): Array<[string, string]> {
  return (list ?? []).map((text) => {
    const at = text.indexOf('=');
    if (at <= 0 || at === text.length - 1) throw AppError.invalid(`${option} must be NAME=VALUE, got "${text}"`);
    return [text.slice(0, at), text.slice(at + 1)];
  });
}

export interface LoadOptions {
  view?: string[];
  type?: string[];
  description?: string;
}

/** A bar on a terminal, a line every 10% otherwise (logs, CI). */
function progressReporter(label: string): { update(f: number): void; stop(): void } {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {percentage}%`, stream: process.stderr },
      cliProgress.Presets.shades_classic,
    );
    bar.start(100, 0);
    return { update: (f) => bar.update(Math.round(f * 100)), stop: () => bar.stop() };
  }
  let last = -1;
  return {
    update: (f) => {
      const step = Math.floor(f * 10);
      if (step > last) {
        last = step;
        process.stderr.write(`${label}: ${step * 10}%\n`);
      }
    },
    stop: () => undefined,
  };
}

export async function loadIndex(
  config: Config,
  catalog: IndexCatalog,
  name: string,
  file: string,
  opts: LoadOptions,
): Promise<string> {
  const types: Record<string, FieldType> = {};
  const grains: Record<string, DateGrain> = {};
  for (const [field, text] of pairs(opts.type, '--type')) {
    const declared = parseDeclaredType(text);
    if (!declared)
      throw AppError.invalid(
        `--type ${field}=${text}: the type must be string, integer, number, boolean, date or date:day|month|year`,
      );
    types[field] = declared.type;
    if (declared.grain) grains[field] = declared.grain;
  }
  const views = pairs(opts.view, '--view').map(([viewName, field]) => ({ name: viewName, field }));
  const engine = new SnapshotEngine(config.dataDir);
  const progress = progressReporter(`loading ${name}`);
  const started = Date.now();
  try {
    const loader = new LoadIndexUseCase(
      new DuckDbSnapshotBuilder(config.dataDir),
      catalog,
      createSearchIndex(config, engine),
    );
    const entry = await loader.loadIndex({
      name,
      file,
      description: opts.description ?? '',
      types,
      grains,
      views,
      onProgress: (f) => progress.update(f),
    });
    progress.stop();
    const secs = (Date.now() - started) / 1000;
    return [
      `published ${entry.name} version ${entry.version}: ${entry.recordCount} records in ${secs.toFixed(1)} s (${Math.round(entry.recordCount / Math.max(secs, 0.001))} records/s)`,
      `fields: ${entry.fields.map((f) => `${f.name} (${f.type}${f.grain ? `, grouped by ${f.grain}` : ''})`).join(', ')}`,
      `dynamic views: ${['Records', ...entry.views.map((v) => `${v.name} = distinct ${v.field}`)].join(', ')}`,
    ].join('\n');
  } finally {
    progress.stop();
    await engine.close();
  }
}

export async function dropIndex(config: Config, catalog: IndexCatalog, name: string): Promise<string> {
  const engine = new SnapshotEngine(config.dataDir);
  try {
    const entry = await new LoadIndexUseCase(
      new DuckDbSnapshotBuilder(config.dataDir),
      catalog,
      createSearchIndex(config, engine),
    ).drop(name);
    return `dropped ${entry.name} (version ${entry.version})`;
  } finally {
    await engine.close();
  }
}
