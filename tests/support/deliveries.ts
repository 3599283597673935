import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/*
 * What the delivery suites share: a webhook receiver, a poll, and a MIME reader for the mails an SMTP
 * server (smtp-server) takes.
 */

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver: records each request; `answer` decides the status (or holds the request). */
export class Receiver {
  readonly got: Received[] = [];
  answer: (r: Received, n: number) => number | 'hold' = () => 200;
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body };
      this.got.push(r);
      const status = this.answer(r, this.got.filter((g) => g.path === r.path).length);
      if (status === 'hold') return;
      if (status >= 300 && status < 400)
        res.writeHead(status, { Location: 'http://169.254.169.254/latest/meta-data/' });
      else res.writeHead(status);
      res.end();
    });
  });
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }
  at(path: string): Received[] {
    return this.got.filter((g) => g.path === path);
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A MIME message's parts (one level, as nodemailer writes a text body with one attachment). */
export function mimeParts(raw: string): Array<{ headers: string; body: string }> {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  if (!boundary) throw new Error('no multipart boundary');
  return raw
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((part) => {
      const at = part.indexOf('\r\n\r\n');
      return { headers: part.slice(0, at), body: part.slice(at + 4) };
    });
}

/** An SMTP server on a free loopback port that keeps each message it takes (raw, latin1) in `mails`. */
export async function startSmtp(
  mails: Array<{ to: string[]; raw: string }>,
): Promise<{ server: SMTPServer; port: number }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (c: Buffer) => (raw += c.toString('latin1')));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.server.address() as AddressInfo).port };
}
