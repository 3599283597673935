import { parseQuery } from '@quarry/query-language';
import { checkRealmTemplates, claimAt, fillTemplate, mapClaims, realmsFor, type OidcClaimMapping } from './oidc-claims';

const mapping: OidcClaimMapping = {
  userClaim: 'sub',
  scopesClaim: 'scope',
  indexesClaim: 'indexes',
  realms: { orders: 'tenant:{tenant} AND region:{https://example.com/region}' },
};
const fields = [
  { name: 'tenant', type: 'string' as const },
  { name: 'region', type: 'string' as const },
];

describe('mapClaims', () => {
  it('names the user oidc:<claim>, keeps recognised scopes from a string or an array, and the indexes claim', () => {
    expect(
      mapClaims({ sub: 'ann', scope: 'openid query:execute bogus indexes:read', indexes: ['orders'] }, mapping),
    ).toEqual({
      userName: 'oidc:ann',
      scopes: ['query:execute', 'indexes:read'],
      indexes: ['orders'],
    });
    expect(mapClaims({ sub: 42, scope: ['reports:read'] }, { ...mapping, indexesClaim: undefined })).toEqual({
      userName: 'oidc:42',
      scopes: ['reports:read'],
    });
    // A claimed indexes claim that is absent gives no index, never the stored grant.
    expect(mapClaims({ sub: 'ann' }, mapping).indexes).toEqual([]);
  });

  it.each([
    [{ scope: 'query:execute' }, /Token claim "sub" \(the user\)/],
    [{ sub: '' }, /must be 1-95 printable/],
    [{ sub: 'a b' }, /without spaces/],
    [{ sub: 'x'.repeat(96) }, /1-95/],
    [{ sub: { nested: 1 } }, /the user/],
    [{ sub: 'ann', scope: 7 }, /"scope" \(the scopes\) must be a string of words or an array/],
    [{ sub: 'ann', scope: ['a', 1] }, /array of strings/],
    [{ sub: 'ann', indexes: Array.from({ length: 1001 }, (_, i) => `i${i}`) }, /more than 1000 values/],
    [{ sub: 'ann', indexes: ['x'.repeat(1001)] }, /longer than 1000/],
  ])('refuses %j with a 403 naming the claim', (claims, detail) => {
    expect(() => mapClaims(claims, mapping)).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', detail: expect.stringMatching(detail) }),
    );
  });
});

describe('claimAt', () => {
  it('reads a namespaced claim as it is, else a dotted path, never an inherited property', () => {
    expect(claimAt({ 'https://example.com/region': 'eu' }, 'https://example.com/region')).toBe('eu');
    expect(claimAt({ realm_access: { roles: ['a'] } }, 'realm_access.roles')).toEqual(['a']);
    expect(claimAt({}, 'constructor')).toBeUndefined();
    expect(claimAt({ a: [1] }, 'a.length')).toBeUndefined();
  });
});

describe('realm templates', () => {
  const claims = { tenant: 'acme', 'https://example.com/region': 'eu' };
  it('fills each claim as an escaped literal: query syntax in a claim is text', () => {
    for (const hostile of ['* OR tenant:globex', '*', '>m', '=acme', 'acme*', '") OR ("', 'x AND NOT y', 'a\\']) {
      const query = fillTemplate('tenant:{tenant}', { tenant: hostile }, 'orders');
      let node;
      try {
        node = parseQuery(query, { fields, now: 0 });
      } catch (err) {
        // Text with no word in it is refused (the call fails), never widened.
        expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
        continue;
      }
      expect(node).toMatchObject({ kind: 'match', fields: ['tenant'], prefix: false });
      expect(parseQuery(fillTemplate('tenant:={tenant}', { tenant: hostile }, 'orders'), { fields, now: 0 })).toEqual({
        kind: 'equals',
        field: 'tenant',
        value: hostile,
      });
    }
  });

  it('gives the templates’ realms on the indexes the user reads, keeps stored ones elsewhere, none on an admin', () => {
    const user = {
      admin: false,
      indexes: ['orders', 'movies'],
      realms: [
        { index: 'movies', query: 'Year:1999' },
        { index: 'orders', query: 'old' },
      ],
    };
    expect(realmsFor(user, claims, mapping)).toEqual([
      { index: 'movies', query: 'Year:1999' },
      { index: 'orders', query: 'tenant:acme AND region:eu' },
    ]);
    expect(realmsFor({ ...user, indexes: ['movies'] }, claims, mapping)).toEqual([
      { index: 'movies', query: 'Year:1999' },
    ]);
    expect(realmsFor({ ...user, indexes: ['*'] }, claims, mapping)).toHaveLength(2);
    expect(realmsFor({ ...user, admin: true }, claims, mapping)).toEqual([]);
    expect(realmsFor(user, claims, { ...mapping, realms: {} })).toEqual(user.realms);
  });

  it.each([
    [{}, /Token claim "tenant" is missing: the realm of index "orders" needs it/],
    [{ tenant: null }, /is missing/],
    [{ tenant: '  ' }, /is blank/],
    [{ tenant: ['acme', 'globex'] }, /must be a string or a number/],
    [{ tenant: { a: 1 } }, /must be a string or a number/],
    [{ tenant: 'x'.repeat(1001) }, /longer than 1000/],
  ])('refuses a user who reads the index when the claim is %j', (c, detail) => {
    expect(() =>
      realmsFor(
        { admin: false, indexes: ['orders'], realms: [] },
        { ...claims, ...c, ...('tenant' in c ? {} : { tenant: undefined }) },
        mapping,
      ),
    ).toThrow(expect.objectContaining({ code: 'FORBIDDEN', detail: expect.stringMatching(detail) }));
  });

  it('checks the templates’ syntax at start-up, naming the index', () => {
    expect(() =>
      checkRealmTemplates({ orders: 'tenant:{tenant}', flights: 'origin:={x} AND amount:[1 TO 9]' }),
    ).not.toThrow();
    expect(() => checkRealmTemplates({ orders: 'tenant:({tenant}' })).toThrow(/QUARRY_OIDC_REALMS\.orders: /);
  });
});
