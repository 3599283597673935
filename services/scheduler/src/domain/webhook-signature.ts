import { AppError } from '@quarry/errors';
import { createHmac } from 'node:crypto';

/**
 * Each schedule's signing secret is derived from the deployment's webhook key and the schedule id:
 * nothing per schedule is stored, and the secret is shown once, at creation.
 */
export function webhookSecret(key: Buffer, scheduleId: string): string {
  return `whsec_${createHmac('sha256', key).update(`webhook:${scheduleId}`).digest('base64url')}`;
}

/** `Quarry-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (the Stripe scheme). */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** Signing needs the deployment's one key: a key made per process would break every other replica's signatures. */
export function noWebhookKey(): AppError {
  return AppError.unavailable(
    'deliver.webhook: webhook delivery is not configured on this server (QUARRY_WEBHOOK_KEY, one key shared by every gateway)',
  );
}
