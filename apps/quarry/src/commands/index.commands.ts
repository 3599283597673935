import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import cliProgress from 'cli-progress';
import type { Config } from '@quarry/config';
import { AppError } from '@quarry/errors';
import type { IndexCatalog } from '@quarry/metadata-store';
import { parseDeclaredType, type DateGrain, type FieldType } from '@quarry/query-language';
import { createSearchIndex, LOAD_LEASE_MS, LoadIndexUseCase } from '@quarry/query';
import { openReportStore } from '@quarry/reports';
import { DuckDbSnapshotBuilder } from '@quarry/query/duckdb';
import { engineOptions, SnapshotEngine } from '@quarry/snapshots';
import { withClickHouseCopies } from './clickhouse-copies';

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
  onError?: string;
  maxErrors?: string;
  encoding?: string;
  dateFormat?: string;
  format?: string;
  append?: boolean;
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/**
 * Progress by bytes of the source: a bar with rate and time left on a terminal, a plain line every 10%
 * otherwise (logs, CI). A load reads a file more than once (check, types, write): the bytes shown are
 * the share of all that reading done, in units of the file's size.
 */
function progressReporter(label: string, totalBytes: number): { update(f: number): void; stop(): void } {
  const started = Date.now();
  const rate = (done: number) => done / Math.max((Date.now() - started) / 1000, 0.001);
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {done}/{total} MB | {rate} MB/s | ETA {eta_formatted}`,
        stream: process.stderr,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(totalBytes, 0, { done: mb(0), total: mb(totalBytes), rate: '0.0' });
    return {
      update: (f) => {
        const done = f * totalBytes;
        bar.update(Math.round(done), { done: mb(done), total: mb(totalBytes), rate: mb(rate(done)) });
      },
      stop: () => bar.stop(),
    };
  }
  let last = -1;
  // A file under a megabyte loads in a blink: ten progress lines would only be noise in a log.
  if (totalBytes < 1e6) return { update: () => undefined, stop: () => undefined };
  return {
    update: (f) => {
      const step = Math.floor(f * 10);
      if (step > last) {
        last = step;
        const done = f * totalBytes;
        const left = f > 0 && f < 1 ? `, about ${Math.ceil(((1 - f) * totalBytes) / rate(done))} s left` : '';
        process.stderr.write(
          `${label}: ${step * 10}% (${mb(done)} of ${mb(totalBytes)} MB, ${mb(rate(done))} MB/s${left})\n`,
        );
      }
    },
    stop: () => undefined,
  };
}

const FORMATS = ['csv', 'json', 'jsonl', 'parquet'] as const;

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], option: string): T | undefined {
  if (value === undefined) return undefined;
  const found = allowed.find((a) => a === value.toLowerCase());
  if (!found) throw AppError.invalid(`${option} must be one of ${allowed.join(', ')}, got "${value}"`);
  return found;
}

/**
 * `-`: standard input is copied to a private file in the data directory first (DuckDB reads a file
 * more than once, and Parquet needs to seek), with its bytes counted as it arrives.
 */
async function spoolStdin(dataDir: string, format: string): Promise<string> {
  const dir = path.join(dataDir, 'tmp');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `stdin-${process.pid}-${Date.now().toString(36)}.${format}`);
  const out = fs.createWriteStream(file, { mode: 0o600 });
  let bytes = 0;
  let lastLine = 0;
  process.stdin.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (!process.stderr.isTTY && bytes - lastLine >= 100e6) {
      lastLine = bytes;
      process.stderr.write(`reading standard input: ${mb(bytes)} MB\n`);
    }
  });
  await pipeline(process.stdin, out);
  return file;
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
  const onError = oneOf(opts.onError, ['fail', 'skip'] as const, '--on-error');
  const encoding = oneOf(
    opts.encoding?.replace(/^latin-1$|^iso-8859-1$/i, 'latin1'),
    ['utf-8', 'latin1'] as const,
    '--encoding',
  );
  const format = oneOf(opts.format, FORMATS, '--format');
  let maxErrors: number | undefined;
  if (opts.maxErrors !== undefined) {
    maxErrors = Number(opts.maxErrors);
    if (!/^\d+$/.test(opts.maxErrors) || !Number.isSafeInteger(maxErrors))
      throw AppError.invalid(`--max-errors must be a whole number, got "${opts.maxErrors}"`);
    if (onError !== 'skip')
      throw AppError.invalid('--max-errors goes with --on-error skip (a strict load allows none)');
  }
  const stdin = file === '-';
  if (stdin && !format) throw AppError.invalid('Reading standard input (-) needs --format csv, json, jsonl or parquet');
  const source = stdin ? await spoolStdin(config.dataDir, format ?? 'csv') : file;
  const label = stdin ? 'standard input' : path.basename(file);
  const engine = new SnapshotEngine(config.dataDir, engineOptions(config));
  const size = fs.existsSync(source) ? fs.statSync(source).size : 0;
  const progress = progressReporter(`loading ${name}`, size);
  const started = Date.now();
  // Which earlier versions saved reports run on (asOf "saved"): kept within QUARRY_SNAPSHOT_KEEP_MB.
  const reports = await openReportStore({ dataDir: config.dataDir, mongo: config.mongo });
  const search = await withClickHouseCopies(createSearchIndex(config, engine, 'load'), config, engine);
  try {
    const loader = new LoadIndexUseCase(
      new DuckDbSnapshotBuilder(config.dataDir),
      catalog,
      search.search,
      LOAD_LEASE_MS,
      { referencedVersions: (index) => reports.referencedIndexVersions(index), keepBytes: config.snapshotKeepBytes },
    );
    const result = await loader.loadIndex({
      name,
      file: source,
      description: opts.description ?? '',
      types,
      grains,
      views,
      format,
      label,
      onError,
      maxErrors,
      encoding,
      dateFormat: opts.dateFormat,
      append: opts.append === true,
      onProgress: (f) => progress.update(f),
    });
    progress.stop();
    const { entry } = result;
    const secs = (Date.now() - started) / 1000;
    const loaded = result.rowsRead - result.rowsRejected;
    return [
      `published ${entry.name} version ${entry.version}: ${entry.recordCount} record${entry.recordCount === 1 ? '' : 's'} in ${secs.toFixed(1)} s (${Math.round(loaded / Math.max(secs, 0.001))} rows/s)`,
      `rows read: ${result.rowsRead} = ${loaded} loaded + ${result.rowsRejected} rejected${result.rejectsFile ? ` (listed in ${result.rejectsFile})` : ''}${opts.append ? `; ${entry.recordCount - loaded} rows kept from the previous version` : ''}${result.unreadLines ? `; ${result.unreadLines} more line${result.unreadLines === 1 ? ' was' : 's were'} not read: inside an unterminated quote` : ''}`,
      ...(entry.recordCount === 0 ? ['the file holds a header and no rows: the index is empty'] : []),
      `fields: ${entry.fields.map((f) => `${f.name} (${f.type}${f.grain ? `, grouped by ${f.grain}` : ''})`).join(', ')}`,
      ...(result.typeNotes ?? []).map(
        (n) =>
          `"${n.column}" is text: ${n.line !== undefined ? `line ${n.line}` : `record ${n.record}`} holds ${JSON.stringify(n.value.slice(0, 60))}, which is not ${n.wanted === 'integer' ? 'an integer' : n.wanted === 'number' ? 'a number' : `a ${n.wanted}`} as written; --type ${JSON.stringify(n.column)}=${n.wanted} loads the column as one (a value it cannot read is then a malformed row)`,
      ),
      `dynamic views: ${['Records', ...entry.views.map((v) => `${v.name} = distinct ${v.field}`)].join(', ')}`,
      ...(entry.rollups?.length ? [`rollups built: ${entry.rollups.map((r) => r.name).join(', ')}`] : []),
      ...(result.droppedRollups ?? []).map(
        (d) =>
          `rollup ${d.name} dropped: ${d.missing.map((f) => JSON.stringify(f)).join(', ')} ${d.missing.length === 1 ? 'is' : 'are'} no longer ${d.missing.length === 1 ? 'a field' : 'fields'} of the index it can read`,
      ),
    ].join('\n');
  } finally {
    progress.stop();
    await reports.close();
    await search.close();
    await engine.close();
    if (stdin) fs.rmSync(source, { force: true });
  }
}

export async function dropIndex(config: Config, catalog: IndexCatalog, name: string): Promise<string> {
  const engine = new SnapshotEngine(config.dataDir, engineOptions(config));
  const search = await withClickHouseCopies(createSearchIndex(config, engine, 'drop'), config, engine);
  try {
    const entry = await new LoadIndexUseCase(new DuckDbSnapshotBuilder(config.dataDir), catalog, search.search).drop(
      name,
    );
    return `dropped ${entry.name} (version ${entry.version})`;
  } finally {
    await search.close();
    await engine.close();
  }
}
