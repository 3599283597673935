import { EventEmitter } from 'node:events';

/**
 * Settles when `closing` does or after `ms`, whichever is first; a failed close is no error here.
 *
 * BullMQ's close waits for its Redis connection for ever, and at shutdown that Redis may already be gone (a
 * managed Redis restarting, or a private redis-server killed first). Every Redis-backed close goes through
 * this, then drops its connections, so a stop always ends.
 */
export async function closeWithin(closing: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!closing) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    closing.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

/**
 * Whether a Redis client that was ready has lost its server since: only then may a close skip waiting
 * for work under way. A client still connecting at start-up is not lost, and closing a BullMQ connection
 * while it initialises makes it emit an error nobody listens to any more (a crash at exit).
 */
export function lostAfterReady(client: {
  status: string;
  on(event: 'ready', listener: () => void): unknown;
}): () => boolean {
  let wasReady = client.status === 'ready';
  client.on('ready', () => (wasReady = true));
  return () => wasReady && client.status !== 'ready';
}

/**
 * closeWithin for a BullMQ queue, worker or queue-events object: once its close settles, its Redis
 * connections keep a listener for 'error'. BullMQ drops every listener of a connection as it closes,
 * but a connection closed while it (re)connects still emits its failed initialisation afterwards (seen
 * at a stop after the private Redis was killed: EPIPE from a reconnect), and an 'error' event nobody
 * listens to ends the process with exit code 1.
 */
export async function closeBullmq(target: object | undefined, closing: Promise<unknown> | undefined, ms: number) {
  if (!target || !closing) return;
  const quiet = () => {
    const fields = target as { connection?: unknown; blockingConnection?: unknown };
    for (const c of [fields.connection, fields.blockingConnection])
      if (c instanceof EventEmitter && c.listenerCount('error') === 0) c.on('error', () => undefined);
  };
  await closeWithin(closing.finally(quiet), ms);
}

/**
 * A BullMQ worker's bounded close: with its Redis up it first finishes connecting (a stop right after the
 * start; a connection closed while it initialises errs after its listeners go) and is closed gracefully
 * within `graceMs`; with its Redis lost it is closed by force within `goneMs`.
 */
export async function closeBullmqWorker(
  worker: { waitUntilReady(): Promise<unknown>; close(force?: boolean): Promise<void> } | undefined,
  opts: { lost: boolean; force?: boolean; graceMs: number; goneMs: number },
): Promise<void> {
  if (!worker) return;
  if (!opts.lost) await closeWithin(worker.waitUntilReady(), opts.goneMs);
  await closeBullmq(worker, worker.close(opts.lost || opts.force), opts.lost ? opts.goneMs : opts.graceMs);
}
