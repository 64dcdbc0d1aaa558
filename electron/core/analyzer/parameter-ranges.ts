/**
 * A definition parsed for its body's sake is parsed without its parameters. A kept `def` line
 * is mostly its parameter list (names, annotations, defaults) — a sixth of the text the parser
 * reads — and no rule reads it, with three exceptions, which keep theirs: a definition with a
 * candidate among its parameters (a default or annotation a rule may match), an autograd
 * `forward(ctx, …)` however its list is written (its parameters say where ctx.device goes), and every definition of a file
 * that starts a process group (the device-selecting edit names the rank parameter in scope).
 * The parser reads `def f(` and then `)`: the tree has the definition, its name and body, and an
 * empty parameter list; every offset stays the original one.
 */
import type { Range } from 'web-tree-sitter';
import { newlineStarts, pointAt } from './line-matches';
import { tokenAt, type SourceTokens } from './source-tokens';

const DEF = /(?:async[ \t]+)?def[ \t]+[A-Za-z_]\w*[ \t]*\(/y;
/** A `forward` whose first parameter is ctx, past spaces, comments and continuations. */
const FORWARD_CTX = /(?:async[ \t]+)?def[ \t]+forward[ \t]*\((?:\s|\\\r?\n|#[^\n]*)*ctx\b/y;
/** Parameter lists shorter than this are left in: a cut costs the parser a range of its own. */
const WORTH = 16;

/** `ranges` (sorted, the text's parsed parts) with the parameter lists that can go cut out. */
export function withoutParameters(
  src: string,
  t: SourceTokens,
  ranges: Range[],
  candidates: number[],
): Range[] {
  if (!ranges.length || src.includes('init_process_group')) return ranges;
  const at = Float64Array.from(candidates).sort();
  const candidateIn = (start: number, end: number) => {
    let lo = 0;
    let hi = at.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    return lo < at.length && at[lo]! < end;
  };
  const cuts: [number, number][] = [];
  const lines = t.lineStarts;
  // the statement lines of each range only (most of the text is left out of every range)
  for (const range of ranges) {
    // the last line that starts at or before the range (a binary search)
    let lo = 0;
    let hi = lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lines[mid]! <= range.startIndex) lo = mid;
      else hi = mid - 1;
    }
    for (let i = lo; i < lines.length && lines[i]! < range.endIndex; i++) {
      const p = lines[i]! + t.lineIndents[i]!;
      if (p < range.startIndex || p >= range.endIndex) continue;
      const k = src.charCodeAt(p);
      if (k !== 100 && k !== 97) continue; // d(ef), a(sync)
      DEF.lastIndex = p;
      const m = DEF.exec(src);
      if (!m) continue;
      FORWARD_CTX.lastIndex = p;
      if (FORWARD_CTX.test(src)) continue;
      const open = p + m[0].length - 1;
      const close = closingParen(src, t, open, range.endIndex);
      if (close < 0 || close - open - 1 < WORTH || candidateIn(open, close)) continue;
      cuts.push([open + 1, close]);
    }
  }
  if (!cuts.length) return ranges;
  const starts = newlineStarts(src);
  const point = (index: number) => pointAt(starts, index);
  const out: Range[] = [];
  let c = 0;
  for (const range of ranges) {
    let from = range.startIndex;
    let fromPoint = range.startPosition;
    for (; c < cuts.length && cuts[c]![1] <= range.endIndex; c++) {
      const [a, b] = cuts[c]!;
      if (a < from) continue;
      out.push({ startIndex: from, endIndex: a, startPosition: fromPoint, endPosition: point(a) });
      from = b;
      fromPoint = point(b);
    }
    out.push({
      startIndex: from,
      endIndex: range.endIndex,
      startPosition: fromPoint,
      endPosition: range.endPosition,
    });
  }
  return out;
}

/**
 * The `)` that closes the `(` at `open`, before `limit`, past strings and comments and nested
 * brackets; -1 if there is none.
 */
function closingParen(src: string, t: SourceTokens, open: number, limit: number): number {
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const k = src.charCodeAt(i);
    if (k === 40 || k === 91 || k === 123) depth++;
    else if (k === 41 || k === 93 || k === 125) {
      if (--depth === 0) return k === 41 ? i : -1;
    } else if (k === 34 || k === 39 || k === 35) {
      // a string or comment: past its end (the lexer's token holding this character)
      const tok = tokenAt(t, i);
      if (tok < 0) return -1;
      i = t.ends[tok]! - 1;
    }
  }
  return -1;
}
