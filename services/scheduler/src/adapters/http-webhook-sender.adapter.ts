import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { refusedAddress } from '@quarry/runtime';
import { AppError, quoteInput } from '@quarry/errors';
import { portOf, WebhookPolicy } from '../domain/webhook-policy';
import type { WebhookAnswer, WebhookSender } from '../ports/webhook-sender.port';

const PARAM = 'deliver.webhook.url';
/**
 * Deadlines of one try, from its start: the receiver's status line and headers within HEADERS_MS, the
 * whole exchange within TOTAL_MS. An idle timeout alone let a receiver trickling a byte every few
 * seconds hold a delivery for minutes.
 */
const HEADERS_MS = 10_000;
const TOTAL_MS = 30_000;

type Vetted = { ok: true; url: URL; address: string; family: 4 | 6 } | { ok: false; detail: string };

/** Webhook POSTs under QUARRY_WEBHOOK_ALLOW, connected to the very address that was checked. */
export class HttpWebhookSender implements WebhookSender {
  private readonly policy: WebhookPolicy;

  constructor(
    patterns: readonly string[],
    private readonly resolve: (host: string) => Promise<Array<{ address: string; family: number }>> = (host) =>
      lookup(host, { all: true, verbatim: true }),
  ) {
    this.policy = new WebhookPolicy(patterns);
  }

  /** The policy's verdict on a URL and on every address its host has now. */
  private async check(raw: string): Promise<Vetted> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { ok: false, detail: `${quoteInput(raw)} is not a valid URL` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { ok: false, detail: `only http and https webhooks are sent, not ${url.protocol}` };
    if (url.username || url.password) return { ok: false, detail: 'a webhook URL must not carry credentials' };
    if (this.policy.empty)
      return { ok: false, detail: 'webhooks are not enabled on this server (QUARRY_WEBHOOK_ALLOW is empty)' };
    const hostPort = `${url.hostname}:${portOf(url)}`;
    const match = this.policy.match(url);
    if (!match.allowed) return { ok: false, detail: `${hostPort} does not match QUARRY_WEBHOOK_ALLOW` };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.resolve(host);
    } catch (err) {
      return {
        ok: false,
        detail: `${url.hostname} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      };
    }
    if (addresses.length === 0) return { ok: false, detail: `${url.hostname} does not resolve` };
    // Every address must pass: a name with one public and one private address could be steered to either.
    const refused = addresses.find((a) => !WebhookPolicy.addressAllowed(a.address, match.explicit));
    if (refused)
      return {
        ok: false,
        detail: `${refusedAddress(url.hostname, refused.address)}; loopback, link-local and private addresses are reached only through a QUARRY_WEBHOOK_ALLOW pattern naming the host exactly`,
      };
    const first = addresses[0];
    return { ok: true, url, address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  async vet(url: string): Promise<void> {
    const v = await this.check(url);
    if (!v.ok) throw AppError.invalid(`${PARAM}: ${v.detail}`);
  }

  async send(raw: string, body: string, headers: Record<string, string>): Promise<WebhookAnswer> {
    // Checked again at each delivery, on the addresses the name has now (DNS rebinding).
    const v = await this.check(raw);
    if (!v.ok) return { ok: false, status: null, detail: `refused: ${v.detail}`, permanent: true };
    const { url, address, family } = v;
    // The socket connects to the checked address, whatever a second lookup would answer.
    const pinned: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<WebhookAnswer>((resolve) => {
      let answered = false;
      const answer = (a: WebhookAnswer) => {
        if (answered) return;
        answered = true;
        clearTimeout(headersTimer);
        clearTimeout(totalTimer);
        resolve(a);
      };
      const req = client.request(
        url,
        {
          method: 'POST',
          lookup: pinned,
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          clearTimeout(headersTimer);
          const status = res.statusCode ?? 0;
          let verdict: WebhookAnswer;
          if (status >= 200 && status < 300) verdict = { ok: true, status };
          else if (status >= 300 && status < 400) {
            const to = res.headers.location ?? '(no Location)';
            verdict = {
              ok: false,
              status,
              detail: `the receiver redirected to ${quoteInput(to)}; redirects are not followed`,
              permanent: true,
            };
          } else verdict = { ok: false, status, detail: `the receiver answered HTTP ${status}`, permanent: false };
          // The answer's body is read to its end (and dropped) within the overall deadline.
          res.on('end', () => answer(verdict));
          res.on('error', () => answer(verdict));
          res.resume();
        },
      );
      const giveUp = (detail: string) => {
        answer({ ok: false, status: null, detail, permanent: false });
        req.destroy();
      };
      const headersTimer = setTimeout(() => giveUp(`no answer's headers within ${HEADERS_MS} ms`), HEADERS_MS);
      const totalTimer = setTimeout(() => giveUp(`the exchange did not finish within ${TOTAL_MS} ms`), TOTAL_MS);
      req.on('error', (err) => answer({ ok: false, status: null, detail: err.message, permanent: false }));
      req.end(body);
    });
  }
}
