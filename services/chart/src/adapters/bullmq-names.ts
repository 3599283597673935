export const CHART_QUEUE = 'quarry-charts';

/**
 * Stalled-job recovery: a worker that dies loses its lock after this long and the job runs again.
 * BullMQ renews the lock every lockDuration / 2 while the processor runs (worker.js, lockRenewTime),
 * and the render runs in Chromium, not on this event loop, so a render may outlast the lock.
 */
export const LOCK_DURATION_MS = 5000;
export const STALLED_INTERVAL_MS = 2000;
/** One re-run after a worker died mid-render; a chart that kills its worker again is failed, not looped. */
export const MAX_STALLED_COUNT = 1;

/** A render that failed (timed out, bad option) fails the same way again: no retry. */
export const ATTEMPTS = 1;

/** Finished jobs kept for inspection; the PNG is never among them (see resultKey). */
export const KEEP_COMPLETED = { count: 100, age: 3600 };
export const KEEP_FAILED = { count: 500, age: 24 * 3600 };

/**
 * BullMQ trims the events stream to about this many entries (XTRIM MAXLEN ~, default 10,000). No PNG
 * travels in it, but a QueueEvents reader that falls further behind than this misses completions and
 * its callers time out, so it is not cut to the bone.
 */
export const EVENTS_MAX_LEN = 1000;

/**
 * The PNG goes to its own key rather than back as the job's return value: BullMQ copies a return
 * value into the job hash and into the events stream, so every image would sit in Redis twice for as
 * long as those are kept. The waiting side reads and deletes the key; the TTL covers a waiter that
 * gave up.
 */
export const RESULT_TTL_SECONDS = 60;
export const resultKey = (jobId: string): string => `${CHART_QUEUE}:png:${jobId}`;

/** Sent with a refusal because the queue is full: long enough for a few renders to drain. */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 5;
