// The parts of the `lucene` package's AST that Quarry reads (the package ships no types).
declare module 'lucene' {
  export interface Location {
    start: { offset: number; line: number; column: number };
    end: { offset: number; line: number; column: number };
  }
  export interface TermNode {
    field: string;
    fieldLocation: Location | null;
    term: string;
    quoted: boolean;
    regex: boolean;
    termLocation: Location;
    similarity?: number | null;
    proximity?: number | null;
    boost: number | null;
    prefix: '+' | '-' | null;
  }
  export interface RangeNode {
    field: string;
    fieldLocation: Location | null;
    term_min: string;
    term_max: string;
    inclusive: 'both' | 'none' | 'left' | 'right';
  }
  export interface BinaryNode {
    left: AstNode;
    operator?: string;
    right?: AstNode;
    start?: string;
    parenthesized?: boolean;
    field?: string;
    fieldLocation?: Location | null;
  }
  export type AstNode = TermNode | RangeNode | BinaryNode;
  export function parse(query: string): AstNode;
  export interface SyntaxError extends Error {
    location?: Location;
  }
}
