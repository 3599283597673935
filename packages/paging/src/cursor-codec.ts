import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '@quarry/errors';

/**
 * Cursors are `base64url(json).base64url(hmac)`: opaque to clients, and any change to them (or use with
 * other search parameters, or for another listing) is detected and refused as a 400.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest();
  }

  encode(kind: string, state: Record<string, unknown>): string {
    const payload = Buffer.from(JSON.stringify({ k: kind, ...state })).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The state the cursor was made with; `bound` values (the search it belongs to) must match. */
  decode(kind: string, cursor: string, bound: Record<string, unknown> = {}): Record<string, unknown> {
    const invalid = () => AppError.invalid('cursor is invalid: pass back the nextCursor of a previous page unchanged');
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 2000) throw invalid();
    const payload = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    let state: Record<string, unknown>;
    try {
      state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      throw invalid();
    }
    if (state.k !== kind) throw invalid();
    for (const [key, value] of Object.entries(bound)) {
      if (JSON.stringify(state[key]) !== JSON.stringify(value)) {
        throw AppError.invalid(
          `cursor belongs to a different search: repeat the same ${key} with it, or start without a cursor`,
        );
      }
    }
    return state;
  }
}
