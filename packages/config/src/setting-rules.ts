import { z } from 'zod';
import { OTLP_PROTOCOLS } from './tracing-settings';

/** The rules settings share: addresses, URLs, durations, sizes, lists. Each names what it expects. */

export const TARGETS = ['gateway', 'query', 'crosstab', 'chart', 'chart-worker', 'reports', 'ingest'] as const;
export type Target = (typeof TARGETS)[number];

export const SEARCH_BACKENDS = ['embedded', 'typesense'] as const;
export type SearchBackend = (typeof SEARCH_BACKENDS)[number];

export const PIVOT_ENGINES = ['duckdb', 'clickhouse'] as const;
export type PivotEngineName = (typeof PIVOT_ENGINES)[number];

export const hostPort = z
  .string()
  .regex(/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/, 'must be HOST:PORT (port 0 picks a free one)');

export const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );

export const targetList = z
  .string()
  .transform((raw) =>
    raw
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(
        z.union([z.literal('all'), z.enum(TARGETS)], {
          error: (i) => `unknown target "${String(i.input)}"; use all or ${TARGETS.join(', ')}`,
        }),
      )
      .min(1, 'names no target'),
  )
  .transform((list): Target[] => (list.includes('all') ? [...TARGETS] : [...new Set(list as Target[])]));

export const durationMs = z.coerce.number().int().positive();

// redis-server's notation: k/m/g are powers of 1000, kb/mb/gb of 1024. Checked here because it goes
// to the server's command line; a cap below a few MB leaves the chart queue no room at all.
const REDIS_UNITS: Record<string, number> = { '': 1, k: 1e3, kb: 1024, m: 1e6, mb: 1024 ** 2, g: 1e9, gb: 1024 ** 3 };
export const redisMemory = z
  .string()
  .trim()
  .regex(/^\d{1,15}(k|kb|m|mb|g|gb)?$/i, 'must be a redis-server size such as 256mb or 1gb')
  .refine((v) => {
    const [, n, unit] = /^(\d+)([a-z]*)$/i.exec(v) ?? [];
    return Number(n) * (REDIS_UNITS[(unit ?? '').toLowerCase()] ?? 0) >= 8 * 1024 ** 2;
  }, 'must be at least 8mb');

// It travels as a gRPC metadata value, which allows printable ASCII only; the cap keeps it far below
// the header size limit.
export const internalToken = z
  .string()
  .min(32, 'must be at least 32 characters')
  .max(1024, 'must be at most 1024 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it travels in gRPC metadata)');

export const filePath = z.string().min(1);

export const otlpProtocol = z.enum(OTLP_PROTOCOLS, {
  error: (i) =>
    `"${String(i.input)}" is not offered: Quarry exports traces over OTLP/HTTP, ${OTLP_PROTOCOLS.join(' or ')} ` +
    "(send them to the collector's HTTP port, 4318 by default)",
});

/**
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs separated by commas, values
 * percent-encoded (OpenTelemetry's "Specifying headers via environment variables").
 */
export const keyValueList = z.string().transform((raw, ctx) => {
  const out: Record<string, string> = {};
  for (const [i, item] of raw.split(',').entries()) {
    if (item.trim() === '') continue;
    const eq = item.indexOf('=');
    const key = eq > 0 ? item.slice(0, eq).trim() : '';
    let value: string | undefined;
    try {
      value = eq > 0 ? decodeURIComponent(item.slice(eq + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!key || value === undefined) {
      // Named by position, not quoted: a header's value is often a collector's API key.
      ctx.addIssue({
        code: 'custom',
        message: `item ${i + 1} is not key=value (pairs separated by commas, values percent-encoded)`,
      });
      return z.NEVER;
    }
    out[key] = value;
  }
  return out;
});

/**
 * Browser origins allowed to call the API (CORS): exact `scheme://host[:port]` values, comma-separated.
 * No wildcard: the API answers with the caller's own token, and a page on any origin must not be able to
 * drive it with a token it was handed.
 */
export const originList = z
  .string()
  .transform((raw) =>
    raw
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z.string().refine((o) => {
        try {
          const u = new URL(o);
          return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
        } catch {
          return false;
        }
      }, 'each origin must be exactly scheme://host[:port] (http or https, no path, no trailing slash, no *)'),
    ),
  );
