import { PassThrough } from 'node:stream';
import { createRootLogger } from './index';

describe('createRootLogger', () => {
  it('writes one JSON object a line, the token redacted, unless asked for lines a person reads', async () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter(Boolean)));
    const log = createRootLogger('info', out);
    log.child({ requestId: 'r1' }).info({ token: 'qk_secret' }, 'hello');
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, requestId: 'r1', token: '[redacted]', msg: 'hello' });
  });

  it('pretty: a line a person reads, with the level and message, not JSON', async () => {
    const out = new PassThrough();
    const written: string[] = [];
    out.on('data', (c: Buffer) => written.push(c.toString()));
    createRootLogger('info', undefined, { pretty: true, prettyOutput: out }).info(
      { requestId: 'r2' },
      'ready to serve',
    );
    await new Promise((r) => setImmediate(r));
    const text = written.join('');
    expect(text).toMatch(/INFO/);
    expect(text).toMatch(/ready to serve/);
    expect(text).toMatch(/requestId: "r2"/);
    expect(() => JSON.parse(text)).toThrow();
  });
});
