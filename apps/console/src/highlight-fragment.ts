/*
 * A search highlight (`data.highlights`) as DOM nodes. The server sends HTML: matched words in
 * <mark>…</mark>, everything else escaped. It is still never parsed as HTML here: the fragment is split on
 * the two mark tags only and every other piece becomes a text node with the five entities the server
 * writes decoded, so an answer holding any other markup (a bug, a proxy, a hostile server) shows it as
 * the text it is and runs nothing.
 */
import { el } from './dom';

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const ENTITY = /&(?:amp|lt|gt|quot|#39);/g;
const MARK = /(<mark>|<\/mark>)/;

/** One pass, so that `&amp;lt;` reads as the text `&lt;`, as the server meant it. */
const decode = (text: string) => text.replace(ENTITY, (e) => ENTITIES[e]);

export function fragmentNodes(fragment: string): Node[] {
  const out: Node[] = [];
  let marked = false;
  for (const piece of fragment.split(MARK)) {
    // A stray or repeated tag changes nothing but whether the text that follows is marked.
    if (piece === '<mark>') marked = true;
    else if (piece === '</mark>') marked = false;
    else if (piece !== '') out.push(marked ? el('mark', {}, decode(piece)) : document.createTextNode(decode(piece)));
  }
  return out;
}
