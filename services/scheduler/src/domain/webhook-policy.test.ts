import { WebhookPolicy } from './webhook-policy';

describe('WebhookPolicy', () => {
  const policy = new WebhookPolicy(['*.example.com', 'hooks.internal', '127.0.0.1:8080', '[::1]:9000']);
  const match = (url: string) => policy.match(new URL(url));

  it('matches host[:port] patterns, `*` within the host', () => {
    expect(match('https://a.example.com/x')).toEqual({ allowed: true, explicit: false });
    expect(match('https://a.b.example.com/x')).toEqual({ allowed: true, explicit: false });
    expect(match('https://example.com/x').allowed).toBe(false);
    expect(match('https://evil.com/.example.com').allowed).toBe(false);
    expect(match('https://a.example.com.evil.com/').allowed).toBe(false);
    expect(match('http://hooks.internal/x')).toEqual({ allowed: true, explicit: true });
    expect(match('http://127.0.0.1:8080/x')).toEqual({ allowed: true, explicit: true });
    expect(match('http://127.0.0.1:8081/x').allowed).toBe(false);
    expect(match('http://127.0.0.1/x').allowed).toBe(false);
    // A pattern without a port admits 80 and 443 only, never the API's or a database's port.
    expect(match('http://hooks.internal:443/x').allowed).toBe(true);
    expect(match('http://hooks.internal:8080/x').allowed).toBe(false);
    expect(match('https://a.example.com:8443/x').allowed).toBe(false);
    expect(match('http://[::1]:9000/x')).toEqual({ allowed: true, explicit: true });
    expect(match('HTTP://A.EXAMPLE.COM/x').allowed).toBe(true);
  });

  it('admits only public unicast addresses unless the host is named exactly', () => {
    const refused = [
      '127.0.0.1',
      '10.0.0.8',
      '172.16.3.4',
      '192.168.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      '::',
      '::7f00:1',
      '::a00:1',
      'fec0::1',
      'feff::1',
      '100::1',
    ];
    for (const a of refused) expect({ a, ok: WebhookPolicy.addressAllowed(a, false) }).toEqual({ a, ok: false });
    for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])
      expect({ a, ok: WebhookPolicy.addressAllowed(a, false) }).toEqual({ a, ok: true });
    expect(WebhookPolicy.addressAllowed('127.0.0.1', true)).toBe(true);
  });

  it('an empty list allows nothing', () => {
    const none = new WebhookPolicy([]);
    expect(none.empty).toBe(true);
    expect(none.match(new URL('https://a.example.com/')).allowed).toBe(false);
  });
});
