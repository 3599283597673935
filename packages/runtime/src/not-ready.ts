/**
 * Why a process is not ready, naming what it waits for ("the metadata store", "the chart service"): the
 * API port's /readyz says that much (never the cause's text, which may name hosts), the ops port the cause.
 */
export class NotReadyError extends Error {
  constructor(
    readonly waitingFor: string,
    cause?: unknown,
  ) {
    super(`${waitingFor} is not ready${cause instanceof Error ? `: ${cause.message}` : ''}`, { cause });
    this.name = 'NotReadyError';
  }
}

/** Runs a readiness check, naming what failed unless a deeper step already did. */
export async function readyStep(waitingFor: string, check: () => Promise<void> | void): Promise<void> {
  try {
    await check();
  } catch (err) {
    throw err instanceof NotReadyError ? err : new NotReadyError(waitingFor, err);
  }
}
