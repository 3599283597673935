import { KNOWN_ENV_VARS, loadConfig, type Target } from '@quarry/config';

export interface ContainerEnv {
  where: string;
  target: Target | 'loader';
  env: Record<string, string>;
}

/** What each target cannot run without in a split deployment (config defaults cover the rest). */
export const REQUIRED_BY_TARGET: Record<Target | 'loader', string[]> = {
  gateway: ['QUARRY_TARGET', 'QUARRY_DATA_DIR', 'MONGODB_URL', 'QUARRY_QUERY_ADDR', 'QUARRY_CROSSTAB_ADDR', 'QUARRY_CHART_ADDR', 'QUARRY_REPORTS_ADDR'],
  query: ['QUARRY_TARGET', 'QUARRY_DATA_DIR', 'MONGODB_URL', 'QUARRY_QUERY_ADDR', 'QUARRY_GRPC_LISTEN_HOST', 'QUARRY_CURSOR_SECRET', 'TYPESENSE_URL', 'TYPESENSE_API_KEY'],
  crosstab: ['QUARRY_TARGET', 'QUARRY_DATA_DIR', 'MONGODB_URL', 'QUARRY_CROSSTAB_ADDR', 'QUARRY_GRPC_LISTEN_HOST'],
  chart: ['QUARRY_TARGET', 'REDIS_URL', 'QUARRY_CHART_ADDR', 'QUARRY_GRPC_LISTEN_HOST'],
  reports: ['QUARRY_TARGET', 'QUARRY_DATA_DIR', 'MONGODB_URL', 'QUARRY_REPORTS_ADDR', 'QUARRY_GRPC_LISTEN_HOST', 'QUARRY_CURSOR_SECRET'],
  'chart-worker': ['QUARRY_TARGET', 'REDIS_URL', 'CHROMIUM_PATH'],
  loader: ['QUARRY_DATA_DIR', 'MONGODB_URL', 'TYPESENSE_URL', 'TYPESENSE_API_KEY'],
};

// Set by the images or the platform, not read by Quarry's config.
const FOREIGN = new Set(['NODE_ENV']);

/** Every problem with one container's environment: unknown names, missing required ones, invalid values. */
export function envProblems(c: ContainerEnv): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(c.env)) {
    if (!KNOWN_ENV_VARS.includes(name) && !FOREIGN.has(name)) problems.push(`${c.where}: sets ${name}, which Quarry's config does not know`);
  }
  for (const name of REQUIRED_BY_TARGET[c.target]) {
    if (!(name in c.env)) problems.push(`${c.where}: leaves out ${name}, which target ${c.target} needs`);
  }
  try {
    loadConfig(c.env);
  } catch (err) {
    problems.push(`${c.where}: ${(err as Error).message}`);
  }
  return problems;
}
