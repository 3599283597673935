/**
 * POSTs to a webhook under the destination policy: the host[:port] must match an allow pattern, and
 * every address it resolves to must be public unless a pattern names that host exactly. The connection
 * goes to the address that was checked (no second lookup a rebinding DNS could answer differently),
 * and a redirect is never followed.
 */
export interface WebhookSender {
  /** At schedule time: rejects with AppError INVALID_ARGUMENT naming deliver.webhook.url. */
  vet(url: string): Promise<void>;
  send(url: string, body: string, headers: Record<string, string>): Promise<WebhookAnswer>;
}

export type WebhookAnswer =
  | { ok: true; status: number }
  /** permanent: retrying cannot help (the policy refused it, or the receiver redirected). */
  | { ok: false; status: number | null; detail: string; permanent: boolean };
