import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { z } from 'zod';
import { REPLAY_TOKEN_MAX } from '@quarry/contract';
import { AppError } from '@quarry/errors';

/** What ran and how: enough to run it again, on the same version, reading relative dates at the same time. */
export interface ReplayClaim {
  /** The method the caller called: a replay needs its scopes. */
  method: 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE' | 'REPORTS.EXECUTE';
  /** The execution it ran (a report runs one of these). */
  runs: 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE';
  /** Its executable params, every default filled in (Execution.executable). */
  params: Record<string, unknown>;
  version: number;
  /** The user it was issued to: nobody else may replay it. */
  userId: string;
  /** When its relative dates were read (Unix ms). */
  nowMs: number;
}

const PREFIX = 'qr1';
/**
 * Params up to this size travel as they are ('j'): deflating a few hundred bytes saves little and costs
 * more than the rest of signing (13 of 18 µs); larger ones are deflated ('z').
 */
const RAW_MAX = 512;
/** A token's params, inflated: far above what any call's params can be, far below what would hurt. */
const MAX_INFLATED = 1 << 20;

const claimSchema = z.strictObject({
  m: z.enum(['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE', 'REPORTS.EXECUTE']),
  r: z.enum(['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE']),
  p: z.record(z.string(), z.unknown()),
  v: z.number().int().positive(),
  u: z.string().min(1),
  t: z.number().int().nonnegative(),
});

const refused = () =>
  AppError.invalid(
    'token is not a replay token this deployment issued (it was changed, cut short, or signed elsewhere)',
  );

/**
 * meta.replay tokens: the claim as compressed JSON and its HMAC-SHA256 under the deployment's key, so
 * nothing in it can be changed (another version, another user, other params) without the signature
 * failing. Nothing is stored: a token lives as long as the version it names is kept.
 */
export class ReplayTokens {
  constructor(private readonly key: Buffer) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(`quarry-replay.${PREFIX}.${payload}`).digest();
  }

  /** The token, or undefined when it would be longer than a replay's params may be (REPLAY_TOKEN_MAX). */
  sign(claim: ReplayClaim): string | undefined {
    const json = JSON.stringify({
      m: claim.method,
      r: claim.runs,
      p: claim.params,
      v: claim.version,
      u: claim.userId,
      t: claim.nowMs,
    });
    const bytes = Buffer.from(json, 'utf8');
    const payload =
      bytes.length <= RAW_MAX ? `j${bytes.toString('base64url')}` : `z${deflateRawSync(bytes).toString('base64url')}`;
    const token = `${PREFIX}.${payload}.${this.mac(payload).toString('base64url')}`;
    return token.length <= REPLAY_TOKEN_MAX ? token : undefined;
  }

  /** The claim of a token this deployment signed; anything else is a 400 that says so, and no more. */
  open(token: string): ReplayClaim {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) throw refused();
    const [, payload, signature] = parts;
    const expected = this.mac(payload);
    const given = Buffer.from(signature, 'base64url');
    // The signature is checked before a byte of the payload is inflated or parsed.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
    let parsed: unknown;
    try {
      const bytes = Buffer.from(payload.slice(1), 'base64url');
      const json = payload[0] === 'z' ? inflateRawSync(bytes, { maxOutputLength: MAX_INFLATED }) : bytes;
      if (payload[0] !== 'z' && payload[0] !== 'j') throw refused();
      parsed = JSON.parse(json.toString('utf8'));
    } catch {
      throw refused();
    }
    const claim = claimSchema.safeParse(parsed);
    if (!claim.success) throw refused();
    const { m, r, p, v, u, t } = claim.data;
    return { method: m, runs: r, params: p, version: v, userId: u, nowMs: t };
  }
}

/** The replay key: derived from the embed key every gateway already shares, for this use alone. */
export function replayKey(embedKey: Buffer): Buffer {
  return createHmac('sha256', embedKey).update('quarry replay tokens').digest();
}
