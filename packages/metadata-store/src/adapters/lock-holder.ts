import os from 'node:os';
import type { LoadLockHolder } from '../ports/index-catalog.port';

/** Whether a process of this host still exists (signal 0 checks without signalling). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A held lock still counts while its lease runs and, when its holder ran on this host, while that
 * process lives: a load killed with -9 frees its lock for the next load at once, not after the lease.
 */
export function holderIsLive(
  holder: Pick<LoadLockHolder, 'host' | 'pid'>,
  expiresAtMs: number,
  nowMs: number,
): boolean {
  if (expiresAtMs <= nowMs) return false;
  if (holder.host === os.hostname() && holder.pid !== process.pid) return processAlive(holder.pid);
  return true;
}

/** When a load refused for a held lock may try again: the refusal is AppError.busy, not a lasting conflict. */
export const LOCK_RETRY_S = 1;

export function lockHeldMessage(name: string, holder: Pick<LoadLockHolder, 'host' | 'pid'>, since: string): string {
  return `Index "${name}" is being loaded or dropped by another process (pid ${holder.pid} on ${holder.host}, since ${since}); try again when it has finished`;
}
