import { z } from 'zod';
import { setting, settingGroup } from '../setting';
import { durationMs } from '../setting-rules';

export const chartSettings = settingGroup('Charts', {
  CHROMIUM_PATH: setting(z.string().min(1).default('/usr/bin/chromium'), {
    doc: 'browser for chart rendering',
    readBy: ['chart-worker'],
  }),
  CHART_RENDER_TIMEOUT_MS: setting(durationMs.default(10000), {
    doc: 'a render that takes longer is cut off (its page is replaced) and not retried: the chart answers 504',
    readBy: ['chart-worker'],
  }),
  CHART_WAIT_TIMEOUT_MS: setting(durationMs.default(30000), {
    doc: 'how long the chart service waits for a worker (covers a retry after a dead worker)',
    readBy: ['chart'],
  }),
  CHART_WORKER_CONCURRENCY: setting(z.coerce.number().int().min(1).max(64).default(2), {
    doc: 'warm Chromium pages (parallel renders) per chart worker',
    readBy: ['chart-worker'],
  }),
  QUARRY_CHROMIUM_IDLE_S: setting(z.coerce.number().int().min(0).max(86400).default(300), {
    doc:
      'Chromium is started by the first PNG chart and closed after this many seconds without one; `0` starts ' +
      'it with the chart worker and keeps it warm (what the compose and k8s chart workers set)',
    readBy: ['chart-worker'],
  }),
  CHART_QUEUE_MAX_WAITING: setting(z.coerce.number().int().min(1).max(100000).default(100), {
    doc:
      'renders that may wait for a chart worker; beyond that a chart is refused at once with 503 and ' +
      '`Retry-After: 5` (approximate: calls arriving together may overshoot it by their number)',
    readBy: ['chart'],
  }),
});
