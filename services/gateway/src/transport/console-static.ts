import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import { quoteInput } from '@quarry/errors';

/**
 * Only this page's own files may load: no inline script or style, no other origin, no framing. With a
 * sign-in, the page may also ask the provider (its discovery document and token endpoint), nothing else.
 */
export function consoleCsp(connectAlso?: string): string {
  const connect = connectAlso ? `'self' ${connectAlso}` : "'self'";
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src ${connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}
export const CONSOLE_CSP = consoleCsp();

/** The console's sign-in with the OpenID provider (QUARRY_OIDC_CLIENT_ID): what the page needs to start it. */
export interface ConsoleSignIn {
  issuer: string;
  clientId: string;
  /** The API's audience, sent as the resource indicator (RFC 8707) so the token is for this API. */
  audience: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * GET /console: the built console's files (apps/console), read once at start. The composition root
 * passes the folder; a process without it (or a build without it) answers a 404 naming why.
 */
export function mountConsole(app: express.Express, dir: string | undefined, signIn?: ConsoleSignIn): void {
  const files = new Map<string, { type: string; body: Buffer }>();
  if (dir && fs.existsSync(path.join(dir, 'index.html'))) {
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[path.extname(name)];
      if (type) files.set(name, { type, body: fs.readFileSync(path.join(dir, name)) });
    }
    // Always there (a 404 would be an error in the page's console): `{}` says "no sign-in, paste a token".
    files.set('sign-in.json', {
      type: 'application/json; charset=utf-8',
      body: Buffer.from(
        JSON.stringify(signIn ? { issuer: signIn.issuer, clientId: signIn.clientId, resource: signIn.audience } : {}),
      ),
    });
  }
  const csp = consoleCsp(signIn ? new URL(signIn.issuer).origin : undefined);
  const serve = (name: string, res: express.Response) => {
    const file = files.get(name);
    if (!file) {
      const detail = files.size
        ? `No console file ${quoteInput(name)}`
        : 'The console is not built (npm run build) or not served by this process';
      res
        .status(404)
        .type('application/problem+json')
        .send(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail }));
      return;
    }
    res.set({
      'Content-Type': file.type,
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-cache',
    });
    res.send(file.body);
  };
  app.get(['/console', '/console/'], (_req, res) => serve('index.html', res));
  // Names are looked up in the map of files read at start: a path can never leave the folder.
  app.get('/console/:file', (req, res) => serve(String(req.params.file), res));
}
