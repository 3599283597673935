import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Agent, fetch, type Response } from 'undici';
import { AppError, abortReason } from '@quarry/errors';
import type { SourceRead, SourceReader, SourceSpec } from '../ports/source-reader.port';
import { createStagedFile, duration, pinnedLookup, removeStagedFile, type HostAllowed } from './source-staging';

/*
 * SourceReader for a file at an http(s) URL (undici's fetch, each hop through an Agent of its own).
 *
 * Guarantees, beyond the port's:
 * - http and https only; every URL dialled, the first and each redirect's target, is passed to
 *   `hostAllowed` first (the caller's policy: QUARRY_SOURCE_ALLOW, no private address unless named), and
 *   dialled at the addresses that check answered, never at a second DNS answer (rebinding);
 *   redirects are followed here (fetch's `redirect: 'manual'`), at most maxRedirects (5) of them;
 *   credentials in the URL (`https://user:pass@host/…`) are sent as Basic authorization to that origin
 *   only, never to a host a redirect leads to, and never appear in a message;
 * - the body is streamed to the staged file as it arrives; `Content-Encoding: gzip` is undone by fetch,
 *   a gzip file itself (it starts with gzip's magic bytes: `.csv.gz`, application/gzip) is inflated here;
 *   at most maxBytes are written, counted inflated, else PAYLOAD_TOO_LARGE (a Content-Length already
 *   past the limit is refused before the body is read);
 * - the format is the response's Content-Type when it names one (text/csv, application/json,
 *   application/x-ndjson, application/vnd.apache.parquet and their aliases), else the URL path's
 *   extension (.csv, .json, .jsonl, .ndjson, .parquet, each possibly .gz); neither: INVALID_ARGUMENT;
 * - the answer's headers must come within headersTimeoutMs and the body must not stall for idleTimeoutMs,
 *   else TIMEOUT; a status other than 2xx is INVALID_ARGUMENT (4xx) or UNAVAILABLE (5xx, 3xx without
 *   Location) naming the status; an aborted signal stops the transfer;
 * - messages name the URL without its credentials or query string (which may hold a token);
 * - `rows` counts CSV records (header excluded, a quote-aware count of line ends) and JSON Lines
 *   (non-blank lines); a JSON or Parquet file is not parsed here: `rows` is 0 and the loader counts;
 *   `columns` is empty (the loader reads the file's own header or schema).
 */

export interface UrlSourceReaderOptions {
  /** Checks each URL before it is dialled (the first and every redirect); throws an AppError to refuse. */
  hostAllowed: HostAllowed;
  /** The most bytes a file may have once inflated. */
  maxBytes: number;
  /** How long the answer's status and headers may take (default 30 s). */
  headersTimeoutMs?: number;
  /** How long the body may go without a byte (default 60 s). */
  idleTimeoutMs?: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
}

type Format = SourceRead['format'];

const CONTENT_TYPES: Record<string, Format> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/comma-separated-values': 'csv',
  'text/x-csv': 'csv',
  'application/json': 'json',
  'text/json': 'json',
  'application/x-ndjson': 'jsonl',
  'application/ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'application/x-jsonlines': 'jsonl',
  'application/jsonlines': 'jsonl',
  'application/vnd.apache.parquet': 'parquet',
  'application/x-parquet': 'parquet',
  'application/parquet': 'parquet',
};

const EXTENSIONS: Record<string, Format> = {
  '.csv': 'csv',
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.parquet': 'parquet',
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A URL as messages show it: no credentials, no query string, no fragment. */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function formatOf(contentType: string | null, url: URL): Format | undefined {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (CONTENT_TYPES[type]) return CONTENT_TYPES[type];
  const name = decodeURIComponent(url.pathname).toLowerCase().replace(/\.gz$/, '');
  return EXTENSIONS[path.posix.extname(name)];
}

class TooLarge extends Error {}

/** Counts the bytes that pass and fails at the first one past the limit. */
function byteLimit(maxBytes: number): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      total += chunk.length;
      if (total > maxBytes) done(new TooLarge());
      else done(null, chunk);
    },
  });
}

/** Counts records as they pass: non-blank lines, whose ends in a CSV are outside double quotes. */
function recordCounter(format: Format): { stage: Transform; records: () => number } {
  let lines = 0;
  let quoted = false;
  let pending = false;
  const csv = format === 'csv';
  const stage = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      for (let i = 0; i < chunk.length; i += 1) {
        const b = chunk[i];
        if (csv && b === 0x22) quoted = !quoted;
        if (b === 0x0a && !quoted) {
          if (pending) lines += 1;
          pending = false;
        } else if (b !== 0x0d && b !== 0x20 && b !== 0x09) pending = true;
      }
      done(null, chunk);
    },
  });
  const records = () => {
    const all = lines + (pending ? 1 : 0);
    if (format === 'csv') return Math.max(0, all - 1);
    return format === 'jsonl' ? all : 0;
  };
  return { stage, records };
}

export class UrlSourceReader implements SourceReader {
  private readonly headersTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly maxRedirects: number;

  constructor(private readonly options: UrlSourceReaderOptions) {
    this.headersTimeoutMs = options.headersTimeoutMs ?? 30_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.maxRedirects = options.maxRedirects ?? 5;
  }

  async read(
    spec: SourceSpec,
    options: { file: string; cursor?: { column: string; after?: string }; signal: AbortSignal },
  ): Promise<SourceRead> {
    if (spec.kind !== 'url') throw AppError.invalid(`UrlSourceReader reads url sources, not ${spec.kind}`);
    if (options.cursor) throw AppError.invalid('A url source has no cursor: it is read whole each time');
    const raw = (spec.connection as { url?: unknown }).url;
    if (typeof raw !== 'string' || raw === '') throw AppError.invalid('A url source needs connection.url');
    let first: URL;
    try {
      first = new URL(raw);
    } catch {
      throw AppError.invalid('connection.url is not a URL');
    }
    if (first.protocol !== 'http:' && first.protocol !== 'https:')
      throw AppError.invalid(`A url source is read over http or https, not ${first.protocol.replace(/:$/, '')}`);
    const authorization =
      first.username || first.password
        ? `Basic ${Buffer.from(`${decodeURIComponent(first.username)}:${decodeURIComponent(first.password)}`).toString('base64')}`
        : undefined;
    const origin = first.origin;
    first.username = '';
    first.password = '';

    const { signal } = options;
    if (signal.aborted) throw abortReason(signal);
    // One controller for this read's own deadlines; the caller's signal stops it as well.
    const own = new AbortController();
    const stop = AbortSignal.any([signal, own.signal]);
    // One Agent per hop, each dialling only the addresses its host's check answered; all closed at the end.
    const agents: Agent[] = [];
    try {
      return await this.fetchAndStage(first, { authorization, origin, signal, own, stop, agents, file: options.file });
    } finally {
      await Promise.all(agents.map((a) => a.destroy().catch(() => undefined)));
    }
  }

  private async fetchAndStage(
    first: URL,
    ctx: {
      authorization: string | undefined;
      origin: string;
      signal: AbortSignal;
      own: AbortController;
      stop: AbortSignal;
      agents: Agent[];
      file: string;
    },
  ): Promise<SourceRead> {
    const { authorization, origin, signal, own, stop, agents, file } = ctx;
    let url = first;
    let res: Response;
    const headersTimer = setTimeout(
      () =>
        own.abort(
          AppError.timeout(`The source URL ${shownUrl(url)} did not answer within ${duration(this.headersTimeoutMs)}`),
        ),
      this.headersTimeoutMs,
    );
    try {
      for (let hops = 0; ; hops += 1) {
        const agent = new Agent({ connect: { lookup: pinnedLookup(await this.options.hostAllowed(url)) } });
        agents.push(agent);
        const headers: Record<string, string> = {
          accept: 'text/csv, application/x-ndjson, application/json, application/vnd.apache.parquet, */*;q=0.5',
          'user-agent': 'quarry-ingest',
        };
        if (authorization && url.origin === origin) headers.authorization = authorization;
        res = await this.fetchOnce(url, { headers, dispatcher: agent }, stop, signal, own);
        if (!REDIRECTS.has(res.status)) break;
        await res.body?.cancel().catch(() => undefined);
        const location = res.headers.get('location');
        if (!location)
          throw AppError.unavailable(`The source URL ${shownUrl(url)} answered HTTP ${res.status} without a Location`);
        if (hops + 1 > this.maxRedirects)
          throw AppError.invalid(
            `The source URL ${shownUrl(first)} redirected more than ${this.maxRedirects} times; the last hop was ${shownUrl(url)}`,
          );
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw AppError.invalid(`The source URL ${shownUrl(url)} redirected to a Location that is not a URL`);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:')
          throw AppError.invalid(
            `The source URL ${shownUrl(url)} redirected to ${next.protocol.replace(/:$/, '')}:, which is not http or https`,
          );
        next.username = '';
        next.password = '';
        url = next;
      }
    } finally {
      clearTimeout(headersTimer);
    }

    const shown = shownUrl(url);
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel().catch(() => undefined);
      const status = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
      if (res.status >= 500) throw AppError.unavailable(`The source URL ${shown} answered ${status}`);
      throw AppError.invalid(`The source URL ${shown} answered ${status}`);
    }
    const format = formatOf(res.headers.get('content-type'), url) ?? formatOf(null, first);
    if (!format) {
      await res.body?.cancel().catch(() => undefined);
      throw AppError.invalid(
        `Cannot tell the format of ${shown}: it was sent as ${res.headers.get('content-type') ?? 'no Content-Type'} and its path does not end in .csv, .json, .jsonl, .ndjson or .parquet`,
      );
    }
    const length = Number(res.headers.get('content-length') ?? NaN);
    if (!res.headers.get('content-encoding') && Number.isFinite(length) && length > this.options.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw this.tooLarge(shown);
    }
    return this.stage(res, { url, shown, format, file, stop, signal, own });
  }

  private async fetchOnce(
    url: URL,
    hop: { headers: Record<string, string>; dispatcher: Agent },
    stop: AbortSignal,
    signal: AbortSignal,
    own: AbortController,
  ): Promise<Response> {
    try {
      return await fetch(url, { redirect: 'manual', ...hop, signal: stop });
    } catch (err) {
      if (signal.aborted) throw abortReason(signal);
      if (own.signal.aborted) throw own.signal.reason;
      throw this.unreachable(err, url);
    }
  }

  private async stage(
    res: Response,
    ctx: {
      url: URL;
      shown: string;
      format: Format;
      file: string;
      stop: AbortSignal;
      signal: AbortSignal;
      own: AbortController;
    },
  ): Promise<SourceRead> {
    const { shown, format, file, stop, signal, own } = ctx;
    const fd = createStagedFile(file);
    const out = fs.createWriteStream('', { fd, autoClose: true });
    const idle = this.idleTimeoutMs;
    const body = res.body;
    const reader = body?.getReader();
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(
        () => own.abort(AppError.timeout(`The source URL ${shown} sent nothing for ${duration(idle)}`)),
        idle,
      );
    };
    try {
      armIdle();
      const head = reader ? await reader.read() : { done: true as const, value: undefined };
      armIdle();
      const firstChunk = head.done ? undefined : head.value;
      const gzipped =
        firstChunk !== undefined && firstChunk.length >= 2 && firstChunk[0] === 0x1f && firstChunk[1] === 0x8b;
      async function* chunks(): AsyncGenerator<Uint8Array> {
        try {
          if (firstChunk) yield firstChunk;
          if (!reader || head.done) return;
          for (;;) {
            const next = await reader.read();
            armIdle();
            if (next.done) return;
            yield next.value;
          }
        } finally {
          reader?.cancel().catch(() => undefined);
        }
      }
      const counter = recordCounter(format);
      await pipeline(
        [
          Readable.from(chunks(), { objectMode: false }),
          ...(gzipped ? [zlib.createGunzip()] : []),
          byteLimit(this.options.maxBytes),
          counter.stage,
          out,
        ],
        { signal: stop },
      );
      return { file, format, rows: counter.records(), columns: [] };
    } catch (err) {
      out.destroy();
      removeStagedFile(file);
      await reader?.cancel().catch(() => undefined);
      if (err instanceof TooLarge) throw this.tooLarge(shown);
      if (signal.aborted) throw abortReason(signal);
      if (own.signal.aborted) throw own.signal.reason;
      if (err instanceof AppError) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code.startsWith('Z_'))
        throw AppError.invalid(`The source URL ${shown} sent gzip that does not inflate (${code})`);
      throw AppError.unavailable(`The transfer of ${shown} broke off: ${this.why(err)}`);
    } finally {
      clearTimeout(idleTimer);
    }
  }

  private tooLarge(shown: string): AppError {
    return new AppError(
      'PAYLOAD_TOO_LARGE',
      `The source URL ${shown} is larger than the limit of ${this.options.maxBytes} bytes (counted inflated); nothing was staged`,
    );
  }

  private why(err: unknown): string {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
  }

  private unreachable(err: unknown, url: URL): AppError {
    const cause = (err as { cause?: { code?: string } }).cause;
    const code = cause?.code ?? (err as NodeJS.ErrnoException).code ?? '';
    const host = url.host;
    switch (code) {
      case 'ECONNREFUSED':
        return AppError.unavailable(`Cannot reach the source URL's host ${host}: connection refused`);
      case 'ENOTFOUND':
        return AppError.invalid(`The source URL's host ${url.hostname} does not resolve`);
      case 'EAI_AGAIN':
        return AppError.unavailable(`The source URL's host ${url.hostname} could not be resolved now (EAI_AGAIN)`);
      case 'UND_ERR_CONNECT_TIMEOUT':
      case 'ETIMEDOUT':
        return AppError.unavailable(`Cannot reach the source URL's host ${host}: the connection timed out`);
    }
    if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code))
      return AppError.invalid(
        `The source URL's host ${host} has a TLS certificate this server does not trust (${code})`,
      );
    return AppError.unavailable(`Cannot fetch the source URL ${shownUrl(url)}: ${code || this.why(err)}`);
  }
}
