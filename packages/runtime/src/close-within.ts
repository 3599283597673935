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
