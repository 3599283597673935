import { z } from 'zod';
import { quoteInput } from '@quarry/errors';
import * as L from '../limits';
import {
  CROSS,
  isTimeZone,
  oneOf,
  optionalBoolean,
  optionalString,
  PARAM,
  requiredString,
  string,
} from './param-builders';

/** http(s) only, and no user:password@: credentials in a URL end up in logs and in the listing. */
function webhookUrlProblem(v: string): string | undefined {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return `${PARAM} is not a valid URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `${PARAM} must be an http or https URL, got scheme ${quoteInput(url.protocol.replace(/:$/, ''))}`;
  if (url.username !== '' || url.password !== '')
    return `${PARAM} must not carry credentials (user:password@); the signature authenticates Quarry`;
  return undefined;
}

// A practical address check (what mail servers accept), not RFC 5322's comments and quoted forms.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const webhookDelivery = z.strictObject(
  {
    url: requiredString(L.WEBHOOK_URL_MAX)
      .superRefine((v, ctx) => {
        // Not a rule JSON Schema states (a parsed URL), so marked as the document's readers cannot check it.
        const problem = webhookUrlProblem(v.trim());
        if (problem) ctx.addIssue({ code: 'custom', params: CROSS, message: problem });
      })
      .meta({
        description:
          'Where each run is POSTed (http or https, no credentials). Its host[:port] must match QUARRY_WEBHOOK_ALLOW.',
      }),
  },
  { error: `${PARAM} must be an object with url` },
);

const emailDelivery = z.strictObject(
  {
    to: z
      .array(
        z
          .string({ error: `${PARAM} must be an e-mail address` })
          .max(L.EMAIL_ADDRESS_MAX, {
            error: `${PARAM} must be at most ${L.EMAIL_ADDRESS_MAX} characters`,
            abort: true,
          })
          .regex(EMAIL, { error: (iss) => `${PARAM} is not an e-mail address: ${quoteInput(String(iss.input))}` }),
        { error: `${PARAM} must be an array of e-mail addresses` },
      )
      .min(1, { error: `${PARAM} needs at least one address` })
      .max(L.MAX_EMAIL_RECIPIENTS, { error: `${PARAM} may have at most ${L.MAX_EMAIL_RECIPIENTS} addresses` })
      .meta({ description: 'Recipients of each run, the output attached.' }),
  },
  { error: `${PARAM} must be an object with to` },
);

/** An alert: a run delivers only when a total passes `op value` on some row, or on the grand total. */
export const alertCondition = z
  .strictObject(
    {
      total: z
        .union([
          z
            .number({ error: `${PARAM} must be an index into the report's totals or a total's name` })
            .int({ error: `${PARAM} must be an index into the report's totals or a total's name` })
            .min(0, { error: `${PARAM} must be an index into the report's totals or a total's name` })
            .max(L.MAX_TOTALS - 1, { error: `${PARAM} must be an index into the report's totals or a total's name` }),
          requiredString(L.TOTAL_NAME_MAX),
        ])
        .meta({
          description:
            "The total tested: an index into the report's totals, or its name as the header shows it (any case).",
        }),
      op: oneOf(L.FILTER_OPS),
      value: z
        .number({ error: `${PARAM} must be a number` })
        .refine(Number.isFinite, { error: `${PARAM} must be a finite number` }),
      on: oneOf(L.ALERT_ON).meta({
        description: "anyRow: some row's total (across the columns) passes; grandTotal: the grand total passes.",
      }),
      onlyOnChange: optionalBoolean().meta({
        description:
          'true: deliver only when the matching rows (their keys and values), or the grand total, differ from the last delivery of this schedule; absent: false.',
      }),
    },
    { error: `${PARAM} must be an object with total, op, value and on` },
  )
  .meta({
    description:
      'An alert on a crosstab report: a run delivers only when the condition holds, and the delivery carries the matching rows with their drill queries (alert in the webhook body, listed in the e-mail). A run that does not deliver is listed as skipped.',
  });

export const reportsScheduleParams = z
  .strictObject({
    guid: requiredString(L.KEYWORD_MAX).meta({ description: 'The report to deliver (yours, or shared with you).' }),
    cron: requiredString(L.CRON_MAX).meta({
      description:
        'When to deliver: 5 cron fields (minute hour day month weekday), or 6 with seconds first. Runs closer together than QUARRY_SCHEDULE_MIN_INTERVAL_S (300 by default) are refused.',
    }),
    timeZone: string(L.TIME_ZONE_MAX, 'an IANA time zone name')
      .optional()
      .meta({ default: L.DEFAULT_TIME_ZONE, description: 'The zone cron is read in (IANA name).' }),
    format: oneOf(L.SCHEDULE_FORMATS).meta({
      description:
        'The output delivered. A crosstab: html, json, csv, xlsx or pdf (its table), png or svg when saved as a chart. A search: every matching record in its sort (not one page), up to QUARRY_EXPORT_MAX_ROWS, as csv, xlsx, parquet, jsonl or json. An output over QUARRY_ATTACHMENT_MAX_BYTES (10 MB) goes as a signed link that expires after QUARRY_SIGNED_LINK_TTL_S instead: the webhook body carries {url, expiresAt, bytes} in place of data, the e-mail the link in its text.',
    }),
    // One object with two optional keys rather than a union, so a mistake inside either is named exactly.
    deliver: z
      .strictObject(
        { webhook: webhookDelivery.optional(), email: emailDelivery.optional() },
        { error: `${PARAM} must be {webhook: {url}} or {email: {to: [...]}}` },
      )
      .refine((d) => (d.webhook === undefined) !== (d.email === undefined), {
        error: `${PARAM} must be {webhook: {url}} or {email: {to: [...]}}`,
      })
      .meta({
        description: 'One destination: a signed webhook ({webhook: {url}}), or e-mail ({email: {to}}).',
        minProperties: 1,
        maxProperties: 1,
      }),
    runNow: optionalBoolean().meta({ description: 'Also deliver once at once.', default: false }),
    when: alertCondition.optional(),
  })
  .superRefine((p, ctx) => {
    if (p.timeZone !== undefined && p.timeZone.length <= L.TIME_ZONE_MAX && !isTimeZone(p.timeZone)) {
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['timeZone'],
        message: `${PARAM} ${quoteInput(p.timeZone)} is not a known IANA time zone (like "UTC" or "Europe/Paris")`,
      });
    }
  })
  .meta({ title: 'ReportsScheduleParams' });

export const reportsSchedulesParams = z
  .strictObject({
    guid: optionalString(L.KEYWORD_MAX).meta({ description: "Only this report's schedules." }),
  })
  .meta({ title: 'ReportsSchedulesParams' });

export const reportsUnscheduleParams = z
  .strictObject({
    scheduleId: requiredString(L.KEYWORD_MAX).meta({ description: 'The id REPORTS.SCHEDULE returned.' }),
  })
  .meta({ title: 'ReportsUnscheduleParams' });
