import { z } from 'zod';
import { partOf, setting, settingGroup } from '../setting';
import { durationMs, filePath, originList } from '../setting-rules';

export const gatewaySettings = settingGroup("The gateway's HTTP API", {
  PORT: setting(z.coerce.number().int().min(0).max(65535).default(8080), {
    doc: 'gateway HTTP port (`0`: any free port)',
    readBy: ['gateway'],
  }),
  // Loopback unless asked: binding every interface is an explicit choice (the image and manifests make it).
  HOST: setting(z.string().min(1).default('127.0.0.1'), {
    doc: 'gateway bind address: loopback unless asked; `0.0.0.0` is an explicit choice (the image, compose and k8s make it)',
    readBy: ['gateway'],
  }),
  /*
   * Exact origins only, no wildcard: the API answers with the caller's own token, and a page on any origin
   * must not be able to drive it with a token it was handed.
   */
  QUARRY_CORS_ORIGINS: setting(
    originList.default(() => []),
    {
      doc:
        'comma list of exact browser origins (`https://app.example.com`) allowed to call `/api/v1` from a page, ' +
        'preflight included; no wildcard, never with credentials',
      default: 'unset (none)',
      readBy: ['gateway'],
    },
  ),
  QUARRY_BODY_TIMEOUT_MS: setting(durationMs.default(10000), {
    doc: "an authenticated call's body must have arrived by then, else HTTP 408 and the connection is closed",
    readBy: ['gateway'],
  }),
  QUARRY_RATE_LIMIT: setting(z.coerce.number().positive().max(1_000_000).optional(), {
    doc:
      'per token (an embed token has its own): requests per second, and how many more may come at once; beyond → ' +
      'HTTP 429 `application/problem+json` with `Retry-After`. Counted in the Redis (`REDIS_URL`, or the private ' +
      'one), so several gateway replicas share one limit; in memory (insurance) while it is unreachable',
    default: 'unset (no limit)',
    readBy: ['gateway'],
  }),
  QUARRY_RATE_BURST: partOf('QUARRY_RATE_LIMIT', z.coerce.number().int().min(0).max(1_000_000).optional(), {
    default: '`0`',
    readBy: ['gateway'],
  }),
  // Two deployments on one Redis need two prefixes.
  QUARRY_RATE_LIMIT_PREFIX: setting(
    z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1 to 100 letters, digits or _ . : -')
      .default('quarry:rate-limit'),
    {
      doc:
        'the Redis key prefix of those counters (letters, digits, `_ . : -`): two deployments sharing one Redis ' +
        'need two prefixes, or they share their limits',
      readBy: ['gateway'],
    },
  ),
  QUARRY_ANON_RATE_LIMIT: setting(z.coerce.number().min(0).max(1_000_000).default(20), {
    doc:
      'calls without a valid token (`rpc.discover`, a missing or wrong token), per client address: requests a ' +
      'second (`0`: no limit), and how many more may come at once',
    readBy: ['gateway'],
  }),
  QUARRY_ANON_RATE_BURST: partOf('QUARRY_ANON_RATE_LIMIT', z.coerce.number().int().min(0).max(1_000_000).default(40), {
    readBy: ['gateway'],
  }),
  QUARRY_EMBED_SECRET: setting(z.string().min(32, 'must be at least 32 characters').optional(), {
    doc:
      'HMAC key (≥ 32 chars) that signs embed tokens (`TOKENS.EMBED`); the same on every gateway replica ' +
      '(compose generates it in `/data/secrets`, k8s reads Secret `quarry-embed-secret`)',
    default: 'a key in the data dir',
    readBy: ['gateway'],
  }),
  QUARRY_EMBED_SECRET_FILE: partOf('QUARRY_EMBED_SECRET', filePath.optional(), { readBy: ['gateway'] }),
  QUARRY_EMBED_TOKENS_PER_USER: setting(z.coerce.number().int().min(1).max(1_000_000).default(100), {
    doc: 'live (unexpired, unrevoked) embed tokens one user may hold; one more is a 400',
    readBy: ['gateway'],
  }),
  QUARRY_AUDIT_DAYS: setting(z.coerce.number().int().min(1).max(36500).default(90), {
    doc: 'how long the audit trail keeps a call (purged at start and daily)',
    readBy: ['gateway'],
  }),
  QUARRY_EXPORT_TTL_S: setting(z.coerce.number().int().min(1).max(31_536_000).default(86_400), {
    doc: "how long an export's file may be downloaded (`EXPORTS.START`); then a sweep deletes it",
    readBy: ['gateway'],
  }),
  QUARRY_EXPORT_MAX_ROWS: setting(z.coerce.number().int().min(1).max(1_000_000_000).default(10_000_000), {
    doc: 'the most records one export may hold; a larger one is a 400 before any work',
    readBy: ['gateway'],
  }),
  QUARRY_UPLOAD_MAX_MB: setting(z.coerce.number().int().min(1).max(1_048_576).default(4096), {
    doc:
      'the largest upload (`POST /indexes/<name>/records`), counted after gzip is undone: a larger body is a 413 ' +
      'and publishes nothing (uploads are streamed to disk, never held in memory)',
    readBy: ['gateway', 'ingest'],
  }),
  QUARRY_EXPORT_DIR: setting(z.string().min(1).optional(), {
    doc:
      'where export files are written and served from: a volume the gateway and the query service share at ' +
      'the same path (k8s: the `quarry-exports` ReadWriteMany claim; compose: the `exports` volume)',
    default: '`QUARRY_DATA_DIR/exports`',
    readBy: ['gateway', 'query'],
  }),
  QUARRY_EXPORT_CONCURRENCY: setting(z.coerce.number().int().min(1).max(64).default(2), {
    doc:
      "exports one gateway process runs at once (BullMQ jobs on the deployment's Redis; more wait queued), " +
      "at most two of them one user's",
    readBy: ['gateway'],
  }),
  QUARRY_EXPORT_MAX_PER_USER: setting(z.coerce.number().int().min(1).max(10_000).default(20), {
    doc:
      'exports one user may have queued or running at once; one more is refused with 429 naming this ' +
      "setting. The queue takes every user's first export before anyone's second, so one user's many " +
      "exports never hold up another's (approximate across gateway replicas)",
    readBy: ['gateway'],
  }),
  QUARRY_EXPORT_PROGRESS_MS: setting(z.coerce.number().int().min(20).max(60_000).default(500), {
    doc:
      "how often a running export's status (`EXPORTS.STATUS` rows and bytes) is brought up to date from its " +
      'file, and the free space of its volume checked',
    readBy: ['gateway'],
  }),
  QUARRY_EXPORT_MIN_FREE_MB: setting(z.coerce.number().int().min(0).max(1_000_000_000).default(64), {
    doc:
      'an export running while its volume has less free space than this fails with a clear error and its ' +
      'partial file is removed, before the disk is full for everything else',
    readBy: ['gateway'],
  }),
});
