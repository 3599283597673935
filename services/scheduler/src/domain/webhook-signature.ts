import { AppError } from '@quarry/errors';
import { createHmac } from 'node:crypto';

/*
 * Deliveries are signed the Standard Webhooks way (https://www.standardwebhooks.com: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, the
 * secret `whsec_<base64 key>`), which every language's standardwebhooks library verifies. The older
 * `Quarry-Signature` is still sent, for one release, for receivers of schedules made before.
 */

/**
 * Each schedule's signing key is derived from the deployment's webhook key and the schedule id: nothing per
 * schedule is stored, and the secret is shown once, at creation.
 */
function signingKey(key: Buffer, scheduleId: string): Buffer {
  return createHmac('sha256', key).update(`webhook:${scheduleId}`).digest();
}

/** The secret REPORTS.SCHEDULE shows: `whsec_` and the key in base64, as Standard Webhooks libraries take it. */
export function webhookSecret(key: Buffer, scheduleId: string): string {
  return `whsec_${signingKey(key, scheduleId).toString('base64')}`;
}

/** The Standard Webhooks headers of one delivery; `id` is the same on every try of it. */
export function standardWebhookHeaders(
  key: Buffer,
  scheduleId: string,
  id: string,
  unixSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const v1 = createHmac('sha256', signingKey(key, scheduleId)).update(`${id}.${unixSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(unixSeconds), 'webhook-signature': `v1,${v1}` };
}

/**
 * Deprecated: `Quarry-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (the Stripe
 * scheme), keyed by the secret as schedules made before Standard Webhooks were shown it
 * (`whsec_` and the key in base64url).
 */
export function legacySignatureHeader(key: Buffer, scheduleId: string, unixSeconds: number, body: string): string {
  const secret = `whsec_${signingKey(key, scheduleId).toString('base64url')}`;
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** Signing needs the deployment's one key: a key made per process would break every other replica's signatures. */
export function noWebhookKey(): AppError {
  return AppError.unavailable(
    'deliver.webhook: webhook delivery is not configured on this server (QUARRY_WEBHOOK_KEY, one key shared by every gateway)',
  );
}
