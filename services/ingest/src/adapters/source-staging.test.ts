import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { pinnedLookup } from './source-staging';

/** What a lookup answers, as net.connect receives it. */
function ask(
  lookup: LookupFunction,
  options: { all?: boolean; family?: number },
): Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve) =>
    lookup('db.example.com', options, (err, address, family) => resolve({ err, address, family })),
  );
}

describe('pinnedLookup', () => {
  const checked = [
    { address: '93.184.216.35', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ];

  it('answers the checked addresses only, whatever the name', async () => {
    expect(await ask(pinnedLookup(checked), {})).toEqual({ err: null, address: '93.184.216.35', family: 4 });
    expect(await ask(pinnedLookup(checked), { all: true })).toEqual({ err: null, address: checked, family: undefined });
  });

  it('keeps to the family asked for, and says when the checked addresses have none of it', async () => {
    expect(await ask(pinnedLookup(checked), { family: 6 })).toMatchObject({
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
    const v4only = await ask(pinnedLookup([checked[0]!]), { family: 6 });
    expect(v4only.err?.code).toBe('ENOTFOUND');
    expect(v4only.err?.message).toBe('db.example.com has no checked address of family 6');
  });
});
