export const CHART_QUEUE = 'quarry-charts';

/** Stalled-job recovery: a worker that dies loses its lock after this long and the job runs again. */
export const LOCK_DURATION_MS = 5000;
export const STALLED_INTERVAL_MS = 2000;
export const ATTEMPTS = 3;
