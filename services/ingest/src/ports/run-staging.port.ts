/**
 * Where a source run stages the rows it read before the loader takes them. Adapters guarantee: the place
 * is on the volume the loader reads, private to this server (0700), one per run id; discard removes the
 * file whether or not it was written, and never throws.
 */
export interface RunStaging {
  place(runId: string): { file: string; discard(): void };
}
