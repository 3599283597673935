import type { Literal, QueryNode } from '@quarry/query-language';
import { ident, wordsColumn } from './sql';

export interface CompiledWhere {
  sql: string;
  /** Named parameters ($p1, $p2, ...): values are always bound, never spliced into SQL. */
  params: Record<string, string | number | boolean>;
}

function dateLiteral(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** Compiles a QueryNode to a DuckDB boolean expression that is never NULL (so NOT behaves as in Lucene). */
export function compileWhere(node: QueryNode): CompiledWhere {
  const params: CompiledWhere['params'] = {};
  let n = 0;
  const bind = (value: string | number | boolean) => {
    const name = `p${++n}`;
    params[name] = value;
    return `$${name}`;
  };

  const value = (lit: Literal): string => {
    switch (lit.type) {
      case 'string':
        return bind(lit.value);
      case 'number':
        return `CAST(${bind(lit.value)} AS DOUBLE)`;
      case 'boolean':
        return `CAST(${bind(lit.value)} AS BOOLEAN)`;
      case 'date':
        return `CAST(${bind(dateLiteral(lit.value))} AS TIMESTAMP)`;
    }
  };

  const OPS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

  const walk = (q: QueryNode): string => {
    switch (q.kind) {
      case 'all':
        return 'TRUE';
      case 'none':
        return 'FALSE';
      case 'and':
        return `(${q.children.map(walk).join(' AND ')})`;
      case 'or':
        return `(${q.children.map(walk).join(' OR ')})`;
      case 'not':
        return `(NOT ${walk(q.child)})`;
      case 'match': {
        // Against the precomputed " word word " column: a substring test, no regex per row.
        const needle = bind(` ${q.words.join(' ')}${q.prefix ? '' : ' '}`);
        const perField = q.fields.map((f) => `coalesce(contains(${wordsColumn(f)}, ${needle}), FALSE)`);
        return perField.length ? `(${perField.join(' OR ')})` : 'FALSE';
      }
      case 'compare': {
        const col = q.value.type === 'string' ? `lower(CAST(${ident(q.field)} AS VARCHAR))` : ident(q.field);
        return `coalesce(${col} ${OPS[q.op]} ${value(q.value)}, FALSE)`;
      }
      case 'exists':
        return q.fieldType === 'string' ? `coalesce(${ident(q.field)} <> '', FALSE)` : `(${ident(q.field)} IS NOT NULL)`;
    }
  };

  return { sql: walk(node), params };
}
