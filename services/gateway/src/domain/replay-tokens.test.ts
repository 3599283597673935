import { createHmac, randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { REPLAY_TOKEN_MAX } from '@quarry/contract';
import { ReplayTokens, replayKey, type ReplayClaim } from './replay-tokens';

const key = replayKey(Buffer.from('k'.repeat(32)));
const tokens = new ReplayTokens(key);
const claim: ReplayClaim = {
  method: 'REPORTS.EXECUTE',
  runs: 'CROSSTAB.EXECUTE',
  params: { index: 'movies', rows: ['Genre'], totals: [{ aggregationType: 'Count' }] },
  version: 7,
  userId: 'u-1',
  nowMs: 1_760_000_000_000,
};

/** A token over any payload, signed with the same key: what only the deployment could make. */
const signedOver = (json: Buffer) => {
  const payload = `z${deflateRawSync(json).toString('base64url')}`;
  const mac = createHmac('sha256', key).update(`quarry-replay.qr1.${payload}`).digest('base64url');
  return `qr1.${payload}.${mac}`;
};

describe('ReplayTokens', () => {
  it('opens what it signed, exactly, small params as they are and large ones deflated', () => {
    const token = tokens.sign(claim)!;
    expect(token).toMatch(/^qr1\.j[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(tokens.open(token)).toEqual(claim);
    const large = { ...claim, params: { ...claim.params, query: 'Title:"Star Wars" OR '.repeat(40) } };
    const deflated = tokens.sign(large)!;
    expect(deflated).toMatch(/^qr1\.z/);
    expect(deflated.length).toBeLessThan(JSON.stringify(large).length);
    expect(tokens.open(deflated)).toEqual(large);
    // The same claim signs the same token: a replay hands back the token it was given.
    expect(tokens.sign(claim)).toBe(token);
  });

  it('refuses a token signed with another key, or changed anywhere', () => {
    const token = tokens.sign(claim)!;
    const other = new ReplayTokens(replayKey(Buffer.from('x'.repeat(32))));
    expect(() => other.open(token)).toThrow(/not a replay token this deployment issued/);
    for (let i = 4; i < token.length; i += 7) {
      const changed = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      if (changed === token) continue;
      expect(() => tokens.open(changed)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
  });

  it('refuses a signed payload that is not a claim, or inflates past its bound, before using any of it', () => {
    expect(() => tokens.open(signedOver(Buffer.from('{"m":"QUERIES.EXECUTE"}')))).toThrow(/not a replay token/);
    expect(() => tokens.open(signedOver(Buffer.from('not json')))).toThrow(/not a replay token/);
    // A payload of another kind than j or z, signed all the same.
    const kind = signedOver(Buffer.from('{}')).replace('.z', '.x');
    const resigned = kind.replace(
      /\.[^.]+$/,
      `.${createHmac('sha256', key)
        .update(`quarry-replay.qr1.${kind.split('.')[1]}`)
        .digest('base64url')}`,
    );
    expect(() => tokens.open(resigned)).toThrow(/not a replay token/);
    // 64 MB of spaces deflate to a few kB: inflating stops at 1 MB.
    expect(() => tokens.open(signedOver(Buffer.alloc(64 << 20, 32)))).toThrow(/not a replay token/);
  });

  it('gives no token for params it could not carry within REPLAY_TOKEN_MAX', () => {
    // Random text does not compress: far past the bound.
    const big = { ...claim, params: { query: randomBytes(30_000).toString('base64') } };
    expect(tokens.sign(big)).toBeUndefined();
    expect(tokens.sign(claim)!.length).toBeLessThan(REPLAY_TOKEN_MAX);
  });
});
