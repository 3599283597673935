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
