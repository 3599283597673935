/*
 * A test harness, never shipped: ClickHouse's HTTP interface served by ClickHouse's own engine (chDB, the
 * library build of ClickHouse) in a process of its own, so the adapter's server path
 * (ClickHouseClientRunner through the official @clickhouse/client) runs here where no ClickHouse server
 * can: no Docker engine, and Debian's clickhouse-server is from 2018.
 *
 * What it proves: the adapter's SQL, DDL (MergeTree tables per version, `allow_nullable_key`), the
 * Parquet insert, the row-count check, the drops of pruning, the typed query parameters, per-query
 * settings and the result parsing, all as the official client encodes them over HTTP (URL parameters
 * `param_*`, settings, `query`, the request body, JSONEachRow answers, ClickHouse's error text) and as
 * ClickHouse's engine parses and runs them.
 * What it does not: a real server's HTTP stack (its parser, keep-alive, compression, authentication,
 * progress headers, query cancellation), sessions, clusters (ON CLUSTER, ReplicatedMergeTree,
 * Distributed tables, insert_distributed_sync) and Keeper. It answers one statement at a time, the way
 * the adapter sends them; anything else it does not know it refuses rather than pretends.
 *
 * Run as a program (startChdbHttpServer compiles and spawns it): `node <compiled> <chdb package dir>
 * <data dir> <database>`; prints `{"port": n}` once it listens on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

interface NativeResult {
  bytes: Buffer;
  rowsRead?: number;
  bytesRead?: number;
}
interface Native {
  QueryAsyncConnection(
    conn: unknown,
    sql: string,
    format: string,
    params?: Record<string, string>,
  ): Promise<NativeResult>;
  InsertRawAsyncConnection(
    conn: unknown,
    prefix: string,
    data: Buffer,
    countLines: boolean,
  ): Promise<{ rowsWritten: number; bytesWritten: number }>;
}

/** URL parameters the HTTP interface reads itself; every other one is a setting of the query. */
const NOT_SETTINGS = new Set(['query', 'query_id', 'database', 'default_format', 'session_id', 'user', 'password']);
/** Settings of the HTTP layer, which this harness does not have: accepted and not applied. */
const HTTP_ONLY = new Set(['wait_end_of_query', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms']);
/** Statements that take a SETTINGS clause before their FORMAT. */
const TAKES_SETTINGS = /^\s*(SELECT|WITH|DESCRIBE|DESC|SHOW|EXISTS|INSERT)\b/i;

const literal = (v: string) => (/^-?\d+(\.\d+)?$/.test(v) ? v : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);

/** A statement with its settings as a SETTINGS clause (before a trailing FORMAT) and its output format. */
export function withSettings(sql: string, settings: Array<[string, string]>): { sql: string; format: string } {
  let text = sql.trim().replace(/;\s*$/, '');
  let format = 'TabSeparated';
  const insert = /^\s*INSERT\b/i.test(text);
  const m = /\s+FORMAT\s+(\w+)\s*$/i.exec(text);
  if (m && !insert) {
    format = m[1];
    text = text.slice(0, m.index);
  }
  const applied = settings.filter(([k]) => !HTTP_ONLY.has(k));
  if (!applied.length) return { sql: text, format };
  if (!TAKES_SETTINGS.test(text))
    throw new Error(
      `Code: 115. DB::Exception: the chDB harness applies settings only to queries and inserts: ${applied.map(([k]) => k).join(', ')}. (UNKNOWN_SETTING)`,
    );
  const clause = ` SETTINGS ${applied.map(([k, v]) => `${k} = ${literal(v)}`).join(', ')}`;
  if (insert) {
    const f = /\s+FORMAT\s+\w+\s*$/i.exec(text);
    return f ? { sql: text.slice(0, f.index) + clause + text.slice(f.index), format } : { sql: text + clause, format };
  }
  return { sql: text + clause, format };
}

const CONTENT_TYPE: Record<string, string> = {
  JSONEachRow: 'application/x-ndjson; charset=UTF-8',
  JSON: 'application/json; charset=UTF-8',
};

async function main(): Promise<void> {
  const [chdbDir, dataDir, database] = process.argv.slice(2);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const chdb = require(chdbDir) as { Session: new (p: string) => { connection: unknown; close(): void } };
  // The native binding the package wraps: its bound parameters are taken as ClickHouse's text forms, as
  // the HTTP interface takes `param_*` (the package's own wrapper would escape them a second time).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const native = (require(path.join(chdbDir, 'dist/loader.js')) as { loadNative(): Native }).loadNative();
  const session = new chdb.Session(dataDir);
  const conn = session.connection;
  await native.QueryAsyncConnection(conn, `CREATE DATABASE IF NOT EXISTS \`${database}\``, 'CSV');
  await native.QueryAsyncConnection(conn, `USE \`${database}\``, 'CSV');

  // One statement at a time on the one connection, as the adapter sends them.
  let turn: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = turn.then(work, work);
    turn = next.catch(() => undefined);
    return next;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/ping') {
        res.end('Ok.\n');
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      const q = url.searchParams;
      const params: Record<string, string> = {};
      const settings: Array<[string, string]> = [];
      for (const [k, v] of q) {
        if (k.startsWith('param_')) params[k.slice(6)] = v;
        else if (!NOT_SETTINGS.has(k)) settings.push([k, v]);
      }
      const queryId = q.get('query_id') ?? '';
      const inUrl = q.get('query');
      serial(async () => {
        if (q.get('database') && q.get('database') !== database)
          throw new Error(
            `Code: 81. DB::Exception: the chDB harness serves database ${database} only. (UNKNOWN_DATABASE)`,
          );
        if (inUrl !== null && body.length > 0 && /^\s*INSERT\b/i.test(inUrl)) {
          const { sql } = withSettings(inUrl, settings);
          const done = await native.InsertRawAsyncConnection(conn, sql, body, false);
          const summary = {
            read_rows: '0',
            read_bytes: '0',
            written_rows: String(done.rowsWritten),
            written_bytes: String(done.bytesWritten),
            total_rows_to_read: '0',
            result_rows: '0',
            result_bytes: '0',
            elapsed_ns: '0',
          };
          return { data: Buffer.alloc(0), format: 'TabSeparated', summary };
        }
        const text =
          inUrl !== null ? `${inUrl}${body.length ? `\n${body.toString('utf8')}` : ''}` : body.toString('utf8');
        const { sql, format } = withSettings(text, settings);
        const r = await native.QueryAsyncConnection(conn, sql, format, params);
        const summary = {
          read_rows: String(r.rowsRead ?? 0),
          read_bytes: String(r.bytesRead ?? 0),
          written_rows: '0',
          written_bytes: '0',
          total_rows_to_read: '0',
          result_rows: '0',
          result_bytes: '0',
          elapsed_ns: '0',
        };
        return { data: r.bytes ?? Buffer.alloc(0), format, summary };
      }).then(
        ({ data, format, summary }) => {
          const gzip =
            q.get('enable_http_compression') === '1' && /\bgzip\b/.test(String(req.headers['accept-encoding']));
          res.writeHead(200, {
            'Content-Type': CONTENT_TYPE[format] ?? 'text/plain; charset=UTF-8',
            'X-ClickHouse-Query-Id': queryId,
            'X-ClickHouse-Format': format,
            'X-ClickHouse-Summary': JSON.stringify(summary),
            ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
          });
          res.end(gzip ? zlib.gzipSync(data) : data);
        },
        (err: unknown) => {
          const message = err instanceof Error ? err.message : String(err);
          const code = /Code: (\d+)\./.exec(message)?.[1] ?? '1001';
          res.writeHead(500, {
            'Content-Type': 'text/plain; charset=UTF-8',
            'X-ClickHouse-Query-Id': queryId,
            'X-ClickHouse-Exception-Code': code,
          });
          res.end(`${message}\n`);
        },
      );
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
  });
  const stop = () =>
    server.close(() => {
      session.close();
      process.exit(0);
    });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) void main();

/** The repository's root: this file is services/crosstab/test-support/. */
const REPO_ROOT = path.resolve(__dirname, '../../..');

export interface ChdbHttpServer {
  /** The HTTP interface's URL, as CLICKHOUSE_URL would give a server's. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the harness in a process of its own (chDB holds one engine per process) over a fresh data
 * folder: this file compiled by swc to CommonJS, run by node.
 */
export async function startChdbHttpServer(database: string): Promise<ChdbHttpServer> {
  const chdbDir = path.dirname(createRequire(path.join(REPO_ROOT, '.engines/chdb/package.json')).resolve('chdb'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-chdb-http-'));
  // swc, as jest compiles the tests (a root dev dependency): the harness is TypeScript, node runs JavaScript.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const swc = require('@swc/core') as typeof import('@swc/core');
  const program = path.join(dir, 'chdb-http-server.js');
  const { code } = swc.transformSync(fs.readFileSync(__filename.replace(/\.js$/, '.ts'), 'utf8'), {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  fs.writeFileSync(program, code);
  const child = spawn(process.execPath, [program, chdbDir, path.join(dir, 'data'), database], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.on('exit', (code) => reject(new Error(`the chDB HTTP harness exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
