import { z } from 'zod';
import { partOf, setting, settingGroup } from '../setting';
import { filePath, url } from '../setting-rules';

export const scheduleSettings = settingGroup('Scheduled deliveries (REPORTS.SCHEDULE)', {
  QUARRY_SCHEDULE_MIN_INTERVAL_S: setting(z.coerce.number().int().min(1).max(31_622_400).default(300), {
    doc:
      'a schedule (`REPORTS.SCHEDULE`) whose cron runs closer together than this anywhere in its cycle is ' +
      'refused (400 naming `cron`)',
    readBy: ['scheduler'],
  }),
  QUARRY_SCHEDULES_PER_USER: setting(z.coerce.number().int().min(0).max(100_000).default(50), {
    doc: 'schedules one user may have; one more is a 400',
    readBy: ['scheduler'],
  }),
  QUARRY_DELIVERIES_PER_DAY: setting(z.coerce.number().int().min(0).max(1_000_000).default(200), {
    doc:
      'per owner and UTC day: deliveries sent (runs and `runNow`), and e-mail recipients addressed; a delivery ' +
      'past either is not sent (the run says why), and a schedule addressing more recipients is a 400',
    readBy: ['scheduler'],
  }),
  QUARRY_RECIPIENTS_PER_DAY: partOf(
    'QUARRY_DELIVERIES_PER_DAY',
    z.coerce.number().int().min(0).max(1_000_000).default(200),
    { readBy: ['scheduler'] },
  ),
  QUARRY_WEBHOOK_ALLOW: setting(
    z
      .string()
      .refine(
        (v) =>
          v
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean)
            .every((p) => /^(?:[A-Za-z0-9*_-]+(?:\.[A-Za-z0-9*_-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(p)),
        'must be comma-separated host[:port] patterns (`*` allowed in the host), e.g. *.example.com,127.0.0.1:8080',
      )
      .default(''),
    {
      doc:
        'comma-separated `host[:port]` patterns webhooks may reach (`*` in the host: ' +
        '`*.example.com,127.0.0.1:8080`). Checked at schedule time and at each delivery on the addresses the host ' +
        'resolves to then, and the connection goes to the checked address; a host resolving to a loopback, ' +
        'link-local (`169.254.169.254`) or private address is refused unless a pattern without `*` names it; ' +
        'redirects are never followed',
      default: 'empty: webhooks refused',
      readBy: ['scheduler'],
    },
  ),
  // Each schedule's secret is derived from it; unset, a key kept in the data directory (data-dir-key.ts).
  QUARRY_WEBHOOK_KEY: setting(z.string().min(32, 'must be at least 32 characters').optional(), {
    doc:
      "derives each schedule's webhook signing secret (≥ 32 chars). One value for every gateway of a deployment " +
      "(k8s: the `quarry-webhook-key` Secret; compose: the loader's `/data/secrets/webhook-key`, read through " +
      '`QUARRY_WEBHOOK_KEY_FILE`): a key per replica would sign with a secret the others do not know',
    default:
      'a key in the data dir (`webhook.key`) when it is writable; else none, and webhook schedules are refused (503)',
    readBy: ['scheduler'],
  }),
  QUARRY_WEBHOOK_KEY_FILE: partOf('QUARRY_WEBHOOK_KEY', filePath.optional(), { readBy: ['scheduler'] }),
  QUARRY_SMTP_URL: setting(url(['smtp:', 'smtps:']).optional(), {
    doc: 'SMTP relay for e-mail deliveries (`smtp://` or `smtps://`, nodemailer); unset: e-mail schedules are refused',
    readBy: ['scheduler'],
  }),
  QUARRY_SMTP_FROM: partOf('QUARRY_SMTP_URL', z.string().min(3).default('Quarry <quarry@localhost>'), {
    readBy: ['scheduler'],
  }),
  QUARRY_ATTACHMENT_MAX_BYTES: setting(z.coerce.number().int().min(1024).max(1_073_741_824).default(10_485_760), {
    doc:
      'a delivery whose output is larger than this (10 MB) carries a signed link to the file instead: the ' +
      'webhook body has `link: {url, expiresAt, bytes}` in place of `data`, the e-mail the link in its text',
    readBy: ['gateway'],
  }),
  QUARRY_SIGNED_LINK_TTL_S: setting(z.coerce.number().int().min(1).max(2_678_400).default(604_800), {
    doc:
      "how long a delivery's signed link downloads its file (`GET /exports/signed/<token>`, no bearer token: " +
      'the link is the credential); then it answers 410 and a sweep deletes the file',
    readBy: ['gateway'],
  }),
  QUARRY_PUBLIC_URL: setting(url(['http:', 'https:']).optional(), {
    doc: "the gateway's address as the recipients of a delivery reach it: signed links start with it",
    default: '`http://HOST:PORT` (`127.0.0.1` for a wildcard HOST)',
    readBy: ['gateway'],
  }),
  // Signs delivery links; unset, a key kept in the data directory (data-dir-key.ts).
  QUARRY_LINK_KEY: setting(z.string().min(32, 'must be at least 32 characters').optional(), {
    doc:
      "HMAC key (≥ 32 chars) that signs deliveries' links; one value for every gateway of a deployment, as a " +
      "link may be followed to any of them (k8s: the `quarry-link-key` Secret; compose: the loader's " +
      '`/data/secrets/link-key`, read through `QUARRY_LINK_KEY_FILE`)',
    default: 'a key in the data dir (`link.key`) when it is writable; else large outputs fail to deliver',
    readBy: ['gateway'],
  }),
  QUARRY_LINK_KEY_FILE: partOf('QUARRY_LINK_KEY', filePath.optional(), { readBy: ['gateway'] }),
  QUARRY_DELIVERY_BACKOFF_MS: setting(z.coerce.number().int().min(1).max(3_600_000).default(30_000), {
    doc: 'a failed delivery is tried again after this, then twice as long each time, 5 tries in all',
    readBy: ['scheduler'],
  }),
});
