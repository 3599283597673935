import { z } from 'zod';
import { setting, settingGroup } from '../setting';
import { durationMs, targetList, TARGETS } from '../setting-rules';

export const processSettings = settingGroup('Every process', {
  QUARRY_TARGET: setting(
    targetList.default(() => [...TARGETS]),
    {
      doc: `modules to run in this process: \`all\` or a comma list of ${TARGETS.map((t) => `\`${t}\``).join(', ')}`,
      default: '`all`',
      readBy: ['every process'],
    },
  ),
  QUARRY_DATA_DIR: setting(z.string().min(1).default('./data'), {
    doc: 'SQLite metadata, index snapshots, the keys kept for cursors, embed tokens and webhooks',
    readBy: ['every process', 'CLI'],
  }),
  LOG_LEVEL: setting(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'), {
    doc: 'pino level (`silent` … `trace`)',
    readBy: ['every process'],
  }),
  QUARRY_LOG_FORMAT: setting(z.enum(['json', 'pretty']).optional(), {
    doc: 'how log lines are written: `json` (one object a line, what production collects) or `pretty` (for a person)',
    default: '`pretty` when standard output is a terminal, else `json`',
    readBy: ['every process'],
  }),
  QUARRY_SHUTDOWN_GRACE_MS: setting(durationMs.default(10000), {
    doc: 'how long SIGTERM waits for in-flight requests',
    readBy: ['every process'],
  }),
  QUARRY_DRAIN_DELAY_MS: setting(z.coerce.number().int().min(0).max(600_000).default(0), {
    doc:
      'after SIGTERM, `/readyz` answers 503 (`draining`) for this long while calls are still taken, so endpoints ' +
      'and load balancers stop sending before the process stops listening; then in-flight calls get ' +
      '`QUARRY_SHUTDOWN_GRACE_MS`. Deployments set 5000 with a grace of 35000 (≥ the 30 s call deadline) and ' +
      '`terminationGracePeriodSeconds: 50`',
    readBy: ['every process'],
  }),
  QUARRY_OPS_PORT: setting(z.coerce.number().int().min(0).max(65535).optional(), {
    doc:
      '`/metrics` (served here only, never on `PORT`), `/healthz` and `/readyz` with the cause of a failure; ' +
      'unset: no ops port',
    readBy: ['every process'],
  }),
  // Loopback unless the deployment scrapes it from outside.
  QUARRY_OPS_HOST: setting(z.string().min(1).default('127.0.0.1'), {
    doc: "the ops port's bind address (`0.0.0.0` in the k8s manifests, for the kubelet and Prometheus)",
    readBy: ['every process'],
  }),
});
