import { z } from 'zod';
import { chartSettings } from './settings/charts.settings';
import { gatewaySettings } from './settings/gateway.settings';
import { grpcSettings } from './settings/grpc.settings';
import { heavyCallSettings } from './settings/heavy-calls.settings';
import { oidcSettings } from './settings/oidc.settings';
import { processSettings } from './settings/process.settings';
import { scheduleSettings } from './settings/schedules.settings';
import { sourceSettings } from './settings/sources.settings';
import { storeSettings } from './settings/stores.settings';
import { tracingSettings } from './settings/tracing.settings';
import { targetList, type Target } from './setting-rules';

export {
  PIVOT_ENGINES,
  SEARCH_BACKENDS,
  TARGETS,
  type PivotEngineName,
  type SearchBackend,
  type Target,
} from './setting-rules';

/**
 * Every environment setting Quarry reads, validated once in main and passed down, in the groups the
 * README's table shows (npm run gen:config-docs writes it from here). Each setting is documented where
 * it is declared, in settings/.
 */
export const SETTING_GROUPS = [
  processSettings,
  gatewaySettings,
  oidcSettings,
  storeSettings,
  grpcSettings,
  heavyCallSettings,
  chartSettings,
  scheduleSettings,
  sourceSettings,
  tracingSettings,
] as const;

export const envShape = {
  ...processSettings.shape,
  ...gatewaySettings.shape,
  ...oidcSettings.shape,
  ...storeSettings.shape,
  ...grpcSettings.shape,
  ...heavyCallSettings.shape,
  ...chartSettings.shape,
  ...scheduleSettings.shape,
  ...sourceSettings.shape,
  ...tracingSettings.shape,
};

export const envSchema = z.object(envShape);

/**
 * Variables whose empty value is refused rather than read as unset. They are the keys of the Secrets in
 * k8s/overlays/prod/secrets/*.env.example, which promise that "an empty value is not accepted: every
 * process refuses to start with one", and the search backend's: read as unset, an empty MONGODB_URL would
 * silently put the metadata in a local SQLite file, an empty TYPESENSE_API_KEY silently search another
 * engine than the loader filled.
 */
export const EMPTY_REFUSED: readonly string[] = [
  'MONGODB_URL',
  'REDIS_URL',
  'REDIS_PASSWORD',
  'TYPESENSE_URL',
  'TYPESENSE_API_KEY',
  'CLICKHOUSE_URL',
  'QUARRY_CURSOR_SECRET',
  'QUARRY_EMBED_SECRET',
  'QUARRY_SEARCH_BACKEND',
  'QUARRY_WEBHOOK_KEY',
  'QUARRY_LINK_KEY',
  'QUARRY_SOURCE_KEY',
];

/** Rules across variables, checked on the raw values so they are reported along with per-variable ones. */
export function crossFieldProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const backend = env.QUARRY_SEARCH_BACKEND ?? 'embedded';
  const targets = targetList.safeParse(env.QUARRY_TARGET ?? 'all');
  // Only the query service searches; the loader (`quarry index load`) is refused by createSearchIndex.
  const searches = !targets.success || targets.data.includes('query');
  if (backend === 'typesense') {
    const missing = ['TYPESENSE_URL', 'TYPESENSE_API_KEY'].filter((name) => !env[name]);
    if (searches && missing.length > 0)
      problems.push(`${missing.join(', ')}: required when QUARRY_SEARCH_BACKEND=typesense`);
  } else if (env.TYPESENSE_URL) {
    // The backend was once chosen by which variables were set; a leftover TYPESENSE_URL now says the
    // operator meant Typesense, and serving or loading the embedded engine instead would split the data.
    problems.push(
      `TYPESENSE_URL: is set, but QUARRY_SEARCH_BACKEND is ${env.QUARRY_SEARCH_BACKEND ? backend : 'unset (embedded)'}; ` +
        'set QUARRY_SEARCH_BACKEND=typesense to search with Typesense, or unset TYPESENSE_URL',
    );
  }
  if (env.CLICKHOUSE_URL && (env.QUARRY_PIVOT_ENGINE ?? 'duckdb') !== 'clickhouse')
    problems.push('CLICKHOUSE_URL: is set, but QUARRY_PIVOT_ENGINE is not clickhouse; set both or neither');
  if (env.REDIS_PASSWORD !== undefined) {
    if (!env.REDIS_URL)
      problems.push('REDIS_PASSWORD: is set without REDIS_URL (the private redis-server makes its own password)');
    else if (/^rediss?:\/\/[^/@]*:[^/@]+@/.test(env.REDIS_URL))
      problems.push('REDIS_PASSWORD: REDIS_URL carries a password already; give it in one place');
  }
  if ((env.QUARRY_OIDC_ISSUER === undefined) !== (env.QUARRY_OIDC_AUDIENCE === undefined))
    problems.push('QUARRY_OIDC_ISSUER, QUARRY_OIDC_AUDIENCE: set both or neither (a token is checked for both)');
  const needsIssuer = ['QUARRY_OIDC_INDEXES_CLAIM', 'QUARRY_OIDC_REALMS', 'QUARRY_OIDC_CLIENT_ID'].filter(
    (name) => env[name] !== undefined,
  );
  if (env.QUARRY_OIDC_ISSUER === undefined && needsIssuer.length > 0)
    problems.push(`${needsIssuer.join(', ')}: needs QUARRY_OIDC_ISSUER`);
  if (env.QUARRY_RATE_BURST !== undefined && env.QUARRY_RATE_LIMIT === undefined)
    problems.push('QUARRY_RATE_BURST: needs QUARRY_RATE_LIMIT (the rate the burst is above)');
  const tls = TLS_VARS.filter((name) => env[name]);
  if (tls.length > 0 && tls.length < TLS_VARS.length) {
    const missing = TLS_VARS.filter((name) => !env[name]);
    problems.push(`${missing.join(', ')}: required when ${tls.join(', ')} is set (all three or none)`);
  }
  // An unparsable target list is reported by the schema; the rule needs the parsed list.
  if (
    targets.success &&
    needsInternalToken(targets.data) &&
    env.QUARRY_INTERNAL_TOKEN === undefined &&
    env.QUARRY_INTERNAL_TOKEN_FILE === undefined
  ) {
    problems.push(
      `QUARRY_INTERNAL_TOKEN: is required when the gateway and the services run in different processes (QUARRY_TARGET=${targets.data.join(',')}); ` +
        'give every process of the deployment the same value of 32 or more characters (e.g. openssl rand -base64 32), or QUARRY_INTERNAL_TOKEN_FILE',
    );
  }
  return problems;
}

export const TLS_VARS = ['QUARRY_GRPC_TLS_CERT', 'QUARRY_GRPC_TLS_KEY', 'QUARRY_GRPC_TLS_CA'] as const;

/** The targets that speak gRPC: the gateway as client, the services as servers (chart-worker uses Redis). */
const GRPC_PARTIES: readonly Target[] = ['gateway', 'query', 'crosstab', 'chart', 'reports', 'ingest'];

/**
 * Whether this process talks gRPC to another process: it runs some of the gRPC parties but not all.
 * Only then must the credential be shared; all in one process can make up its own.
 */
export function needsInternalToken(targets: readonly Target[]): boolean {
  const here = GRPC_PARTIES.filter((t) => targets.includes(t));
  return here.length > 0 && here.length < GRPC_PARTIES.length;
}

export type Env = z.output<typeof envSchema>;

/** Names the schema knows: the deployment manifests are checked against this list. */
export const KNOWN_ENV_VARS: readonly string[] = Object.keys(envShape);
