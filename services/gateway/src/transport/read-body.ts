import type { IncomingMessage } from 'node:http';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' | 'too-slow' };

/**
 * Reads the raw body, refusing as soon as it passes `limit` bytes: by Content-Length when declared,
 * else while counting chunks (a chunked body has none); with `ms`, also when it is not all there by then.
 */
export function readBody(req: IncomingMessage, limit: number, ms?: number): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve({ ok: false, reason: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer = ms === undefined ? undefined : setTimeout(() => finish({ ok: false, reason: 'too-slow' }), ms);
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish({ ok: false, reason: 'too-large' });
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => finish({ ok: true, body: Buffer.concat(chunks, size) }));
    req.on('error', () => finish({ ok: false, reason: 'aborted' }));
    req.on('close', () => finish({ ok: false, reason: 'aborted' }));
  });
}

/**
 * After an early refusal, drop what the client still sends but no more than `cap` bytes or `ms`
 * milliseconds; resolves once the body has ended (or the connection was cut at a limit). The answer is
 * sent after this: answering first and closing would reset a client still writing, which then reads a
 * broken pipe instead of our 413 (seen under load in the soak test).
 */
export function discardRest(req: IncomingMessage, cap: number, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const finish = () => {
      clearTimeout(timer);
      resolve();
    };
    const kill = () => {
      req.socket.destroy();
      finish();
    };
    const timer = setTimeout(kill, ms);
    timer.unref();
    if (req.readableEnded) return finish();
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > cap) kill();
    });
    req.on('end', finish);
    req.on('close', finish);
    req.resume();
  });
}
