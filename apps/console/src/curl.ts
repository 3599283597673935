import { byId } from './dom';

/** The call as a copyable curl command; the token stays out of it ($QUARRY_TOKEN). */
export function showCurl(method: string, params: object): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const quoted = `'${body.replace(/'/g, `'\\''`)}'`;
  byId('curl').textContent =
    `curl -s ${location.origin}/api/v1 \\\n  -H "Authorization: Bearer $QUARRY_TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  -d ${quoted}`;
}
