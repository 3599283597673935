import { RAW_JSON_MARK, RawJson } from '../ports/raw-json';
import type { JsonRpcId } from './json-rpc-envelope';

const QUOTED_MARK = JSON.stringify(RAW_JSON_MARK);

/** A method's result, its data's RawJson properties spliced in as the text they hold. */
export function resultJson(id: JsonRpcId, data: unknown, meta: Record<string, unknown>): string {
  const text = JSON.stringify({ jsonrpc: '2.0', id, result: { data, meta } });
  const raws =
    data !== null && typeof data === 'object'
      ? Object.values(data).filter((v): v is RawJson => v instanceof RawJson)
      : [];
  if (raws.length === 0 && !text.includes(QUOTED_MARK)) return text;
  const parts = text.split(QUOTED_MARK);
  // Serialization visits data's properties in the order Object.values lists them.
  if (parts.length !== raws.length + 1)
    throw new Error('RawJson is only honoured as a direct property of a method result');
  return parts.reduce((out, part, i) => out + raws[i - 1].text + part);
}
