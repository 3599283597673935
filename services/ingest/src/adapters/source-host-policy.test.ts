import { AppError } from '@quarry/errors';
import { addressAllowed, makeHostPolicy, type Resolver } from './source-host-policy';

describe('makeHostPolicy (QUARRY_SOURCE_ALLOW)', () => {
  /** A DNS of its own: names the tests give, the rest unknown. */
  const dns: Record<string, string[]> = {
    'files.example.com': ['93.184.216.34'],
    'db.example.com': ['93.184.216.35', '2606:2800:220:1:248:1893:25c8:1946'],
    'split.example.com': ['93.184.216.36', '10.0.0.7'],
    'sneaky.example.com': ['127.0.0.1'],
    'v6.example.com': ['::ffff:192.168.1.1'],
    'db.internal': ['10.1.2.3'],
  };
  const resolve: Resolver = async (host) => {
    const found = dns[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const policy = makeHostPolicy(
    ['*.example.com', 'db.internal:5432', '127.0.0.1:8080', '[::1]:9000', 'warehouse.internal:*'],
    resolve,
  );
  const verdict = async (url: string, p = policy): Promise<string> => {
    try {
      await p(new URL(url));
      return 'ok';
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return `${(err as AppError).code}: ${(err as AppError).detail}`;
    }
  };

  it('admits a host matching a pattern; a bare pattern admits the kind’s own ports only', async () => {
    expect(await verdict('https://files.example.com/a.csv')).toBe('ok');
    expect(await verdict('http://files.example.com/a.csv')).toBe('ok');
    expect(await verdict('postgres://db.example.com')).toBe('ok');
    expect(await verdict('postgres://db.example.com:5432')).toBe('ok');
    expect(await verdict('mysql://db.example.com:3306')).toBe('ok');
    expect(await verdict('HTTPS://FILES.EXAMPLE.COM/x')).toBe('ok');
    expect(await verdict('postgres://db.example.com:6379')).toBe(
      'FORBIDDEN: db.example.com:6379 does not match QUARRY_SOURCE_ALLOW',
    );
    expect(await verdict('https://files.example.com:8443/a.csv')).toBe(
      'FORBIDDEN: files.example.com:8443 does not match QUARRY_SOURCE_ALLOW',
    );
    expect(await verdict('https://example.com/a.csv')).toBe(
      'FORBIDDEN: example.com:443 does not match QUARRY_SOURCE_ALLOW',
    );
    expect(await verdict('https://files.example.com.evil.net/')).toMatch(
      /^FORBIDDEN: .* does not match QUARRY_SOURCE_ALLOW$/,
    );
    expect(await verdict('https://evil.net/.example.com')).toMatch(/does not match/);
  });

  it('answers the addresses it checked, which are the ones a reader dials', async () => {
    expect(await policy(new URL('postgres://db.example.com'))).toEqual([
      { address: '93.184.216.35', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    expect(await policy(new URL('http://127.0.0.1:8080/x'))).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await policy(new URL('http://[::1]:9000/x'))).toEqual([{ address: '::1', family: 6 }]);
  });

  it('refuses loopback, link-local and private addresses unless a pattern names the host exactly', async () => {
    // Named exactly (no `*`): an operator wrote it down.
    expect(await verdict('postgres://db.internal:5432')).toBe('ok');
    expect(await verdict('http://127.0.0.1:8080/x.csv')).toBe('ok');
    expect(await verdict('http://[::1]:9000/x.csv')).toBe('ok');
    expect(
      await verdict(
        'mysql://warehouse.internal:3307',
        makeHostPolicy(['warehouse.internal:*'], async () => [{ address: '192.168.0.9', family: 4 }]),
      ),
    ).toBe('ok');
    expect(await verdict('postgres://db.internal:5433')).toMatch(/does not match QUARRY_SOURCE_ALLOW/);
    expect(await verdict('http://127.0.0.1/x.csv')).toMatch(/does not match/);
    // Through a wildcard, a name that resolves to a private address is refused, whatever else it has.
    expect(await verdict('https://sneaky.example.com/x.csv')).toBe(
      'FORBIDDEN: sneaky.example.com resolves to a loopback address; loopback, link-local and private addresses are reached only through a QUARRY_SOURCE_ALLOW pattern naming the host exactly',
    );
    expect(await verdict('https://split.example.com/x.csv')).toMatch(
      /^FORBIDDEN: split\.example\.com resolves to a private address/,
    );
    expect(await verdict('https://v6.example.com/x.csv')).toMatch(
      /^FORBIDDEN: v6\.example\.com resolves to a private address/,
    );
    const everything = makeHostPolicy(['*:*'], resolve);
    for (const host of [
      '127.0.0.1',
      '10.0.0.8',
      '169.254.169.254',
      '[::1]',
      '[fd00::1]',
      '[::ffff:127.0.0.1]',
      '0.0.0.0',
    ])
      expect(await verdict(`http://${host}:8080/x`, everything)).toMatch(/^FORBIDDEN: \S+ is an? [a-z -]+ address;/);
    // A name's refused address is not shown: it is the operator's network, not the caller's to learn.
    expect(await verdict('https://split.example.com/x.csv')).not.toMatch(/10\.0\.0\.7/);
    expect(await verdict('http://files.example.com:8080/x', everything)).toBe('ok');
  });

  it('refuses names that resolve to loopback through the real resolver (localhost)', async () => {
    const real = makeHostPolicy(['*', '*:*']);
    expect(await verdict('http://localhost:8080/x', real)).toMatch(
      /^FORBIDDEN: localhost resolves to a loopback address/,
    );
    expect(await verdict('postgres://localhost', real)).toMatch(/a loopback address/);
    expect(await verdict('http://localhost:8080/x', makeHostPolicy(['localhost:8080']))).toBe('ok');
  });

  it('an empty list refuses every host; a name that does not resolve is said to', async () => {
    expect(await verdict('https://files.example.com/x', makeHostPolicy([], resolve))).toBe(
      'FORBIDDEN: Sources on other hosts are not enabled on this server (QUARRY_SOURCE_ALLOW is empty): files.example.com:443 is refused',
    );
    expect(await verdict('https://nowhere.example.com/x')).toBe(
      'INVALID_ARGUMENT: nowhere.example.com does not resolve (ENOTFOUND)',
    );
  });

  it('judges addresses as the webhook policy does', () => {
    const refused = ['127.0.0.1', '10.0.0.8', '172.16.3.4', '192.168.0.1', '169.254.169.254', '0.0.0.0', '100.64.0.1'];
    const refusedV6 = [
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::',
      '::7f00:1',
      'fec0::1',
      '100::1',
    ];
    for (const a of [...refused, ...refusedV6]) expect({ a, ok: addressAllowed(a, false) }).toEqual({ a, ok: false });
    for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])
      expect({ a, ok: addressAllowed(a, false) }).toEqual({ a, ok: true });
    expect(addressAllowed('127.0.0.1', true)).toBe(true);
    expect(addressAllowed('not an address', false)).toBe(false);
  });
});
