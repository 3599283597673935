import type { AlertOutcome } from '@quarry/contract';

/** The alert as the webhook body carries it: what was tested and what matched (the digest stays internal). */
export function alertBody(alert: AlertOutcome): Omit<AlertOutcome, 'digest' | 'holds'> {
  const { digest: _digest, holds: _holds, ...shown } = alert;
  return shown;
}

const keyText = (key: unknown[]) => key.map((k) => (k === null ? '(blank)' : String(k))).join(' / ');

/** The alert in an e-mail's text: the condition, then each matching row with its value and drill query. */
export function alertText(alert: AlertOutcome): string {
  const head = `Alert: ${alert.total} ${alert.op} ${alert.value} on ${alert.on === 'grandTotal' ? 'the grand total' : 'any row'}.`;
  if (alert.on === 'grandTotal') return `${head}\nGrand total: ${String(alert.grandTotal)}\n\n`;
  const lines = alert.rows.map(
    (r) => `- ${keyText(r.key)}: ${r.value}${r.drillQuery === null ? '' : `  (records: ${r.drillQuery})`}`,
  );
  const more = alert.rowsOmitted > 0 ? [`… and ${alert.rowsOmitted} more rows`] : [];
  return `${head}\nMatching rows:\n${[...lines, ...more].join('\n')}\n\n`;
}
