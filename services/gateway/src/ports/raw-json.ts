import { randomUUID } from 'node:crypto';

/** Stands in for a RawJson while the rest of a response is serialized; unguessable, so no user text equals it. */
export const RAW_JSON_MARK = `\u0000raw-json-${randomUUID()}\u0000`;

/**
 * JSON text a service already produced (a page of records), passed to the HTTP response as it is: the
 * gateway neither parses nor re-serializes it (bench/README.md, latency). It serializes as a mark that
 * the transport replaces with the text; only a direct property of a method's data is replaced.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): string {
    return RAW_JSON_MARK;
  }
}
