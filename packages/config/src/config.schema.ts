import { z } from 'zod';

export const TARGETS = ['gateway', 'query', 'crosstab', 'chart', 'chart-worker', 'reports'] as const;
export type Target = (typeof TARGETS)[number];

const hostPort = z
  .string()
  .regex(/^[A-Za-z0-9.\-\[\]:]+:\d{1,5}$/, 'must be HOST:PORT (port 0 picks a free one)');

const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `must be a URL with scheme ${protocols.join(' or ')}`);

const targetList = z
  .string()
  .transform((raw) => raw.split(',').map((t) => t.trim()).filter(Boolean))
  .pipe(
    z
      .array(z.union([z.literal('all'), z.enum(TARGETS)], { error: (i) => `unknown target "${String(i.input)}"; use all or ${TARGETS.join(', ')}` }))
      .min(1, 'names no target'),
  )
  .transform((list): Target[] => (list.includes('all') ? [...TARGETS] : [...new Set(list as Target[])]));

const durationMs = z.coerce.number().int().positive();

/** Every environment setting Quarry reads, validated once in main and passed down. */
export const envShape = {
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).default('0.0.0.0'),
    QUARRY_TARGET: targetList.default(() => [...TARGETS]),
    QUARRY_DATA_DIR: z.string().min(1).default('./data'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    REDIS_URL: url(['redis:', 'rediss:']).optional(),
    REDIS_SERVER_PATH: z.string().min(1).default('redis-server'),
    MONGODB_URL: url(['mongodb:', 'mongodb+srv:']).optional(),
    MONGODB_DB: z.string().min(1).default('quarry'),
    TYPESENSE_URL: url(['http:', 'https:']).optional(),
    TYPESENSE_API_KEY: z.string().min(1).optional(),
    CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
    QUARRY_QUERY_ADDR: hostPort.optional(),
    QUARRY_CROSSTAB_ADDR: hostPort.optional(),
    QUARRY_CHART_ADDR: hostPort.optional(),
    QUARRY_REPORTS_ADDR: hostPort.optional(),
    QUARRY_CURSOR_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    QUARRY_GRPC_LISTEN_HOST: z.string().min(1).optional(),
    QUARRY_OPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    QUARRY_GRPC_DEADLINE_MS: durationMs.default(30000),
    QUARRY_SHUTDOWN_GRACE_MS: durationMs.default(10000),
    CHART_RENDER_TIMEOUT_MS: durationMs.default(10000),
    CHART_WAIT_TIMEOUT_MS: durationMs.default(30000),
    CHART_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
};

export const envSchema = z.object(envShape);

/** Rules across variables, checked on the raw values so they are reported along with per-variable ones. */
export function crossFieldProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  if (env.TYPESENSE_URL && !env.TYPESENSE_API_KEY) problems.push('TYPESENSE_API_KEY: is required when TYPESENSE_URL is set');
  return problems;
}

export type Env = z.output<typeof envSchema>;

/** Names the schema knows: the deployment manifests are checked against this list. */
export const KNOWN_ENV_VARS: readonly string[] = Object.keys(envShape);
