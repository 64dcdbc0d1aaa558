/**
 * Only the code a rule can match is parsed. Parsing is most of a scan's time, and in real model
 * code most functions never touch the device: every top-level definition or block (and every
 * method of a class) without a single candidate for any rule is replaced by `pass` and spaces —
 * same length, same newlines — so the tree keeps every offset of the original text and the
 * analysis reads it unchanged. Candidates are the cheap text searches the analysis itself starts
 * from (strings, members, keywords, imported names, …), widened where a rule reaches beyond its
 * statement (the callers of a helper returning an SM count, an extension's call sites).
 */

import type { Range } from 'web-tree-sitter';
import { loneCarriageReturn, newlineStarts, pointAt } from './line-matches';
import {
  CASE,
  CLASS,
  DECORATOR,
  ELIF,
  ELSE,
  EXCEPT,
  FINALLY,
  FROM,
  IF,
  IMPORT,
  TRY,
  type SourceTokens,
} from './source-tokens';

/** The clauses that continue a statement (`else:`, `except:`, …): line word codes. */
const continues = (word: number) =>
  word === ELSE || word === ELIF || word === EXCEPT || word === FINALLY || word === CASE;

/**
 * Every statement that holds no candidate replaced by `pass` (at any depth: a definition or
 * block that holds one keeps its header and is looked into): where each `pass` is written over
 * the source (`patches`, in order) and the ranges the parser reads, none when nothing is left
 * out. `at` are offsets into the source, any order; `inElse` are
 * candidates only inside the `else:` block of a statement that holds one of the `imports`
 * (`if is_x_available(): import x … else: raise` makes x required; a `raise` elsewhere is not
 * read); a definition whose header holds one of `whole` is kept whole (a rule reports the
 * definition itself); `keep` marks top-level statements kept whole (read by the analysis as a whole: enums),
 * `look` top-level statements whose header is always kept (the entry point's `if __name__`).
 */
export function relevantSource(
  src: string,
  tokens: SourceTokens,
  candidates: { at: number[]; inElse: number[]; imports: number[]; whole: number[] },
  keep: RegExp,
  look: RegExp,
): { patches: number[]; ranges: Range[] } {
  if (src.length < 2000) return { patches: [], ranges: [] };
  const { lineStarts, lineIndents, lineWords } = tokens;
  const hitIn = (sorted: Float64Array) => (start: number, end: number) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length && sorted[lo]! < end;
  };
  const hit = hitIn(Float64Array.from(candidates.at).sort());
  const elseHit = hitIn(Float64Array.from(candidates.inElse).sort());
  const importHit = hitIn(Float64Array.from(candidates.imports).sort());
  const wholeHit = hitIn(Float64Array.from(candidates.whole).sort());
  /** An `else:` line (at any depth) between start and end: an else-only candidate may be in it. */
  const elseBetween = (start: number, end: number) => {
    for (let at = src.indexOf('else', start); at >= 0 && at < end; at = src.indexOf('else', at + 4))
      if (/^[ \t]*$/.test(src.slice(src.lastIndexOf('\n', at - 1) + 1, at))) return true;
    return false;
  };
  const blanks: [number, number][] = [];
  /**
   * The statements of lines[i0, i1) (a block, at the indentation of its first line) up to `to`;
   * `underElse`: the block is (inside) an `else:` block that counts; `of`: the lines are the
   * clauses of an `if` (whose `else:` counts when one of its clauses imports directly), or the
   * body of a class that may be a torch.autograd.Function (its `forward` is read whole).
   */
  const visit = (
    i0: number,
    i1: number,
    to: number,
    depth: number,
    underElse: boolean,
    of: { if: boolean; function: boolean },
  ) => {
    const indent = lineIndents[i0]!;
    // statements at this indentation: [line index, end offset], and whether in an `else:` part
    const stmts: { i: number; word: number; end: number; inElse: boolean }[] = [];
    let clauseElse = false;
    let imports = false;
    for (let i = i0; i < i1; i++) {
      const lineIndent = lineIndents[i]!;
      if (lineIndent > indent) continue;
      const start = lineStarts[i]!;
      const last = stmts.at(-1);
      // a clause of the enclosing statement (`except:`, `else:`) ends this block's statement
      if (lineIndent < indent) {
        if (last && last.end > start) last.end = start;
        clauseElse = lineWords[i] === ELSE;
        continue;
      }
      const word = lineWords[i]!;
      if (last && (continues(word) || last.word === DECORATOR)) {
        if (last.word === DECORATOR) last.word = word;
        continue;
      }
      if (last && last.end > start) last.end = start;
      imports ||= word === IMPORT || word === FROM;
      stmts.push({ i, word, end: to, inElse: clauseElse });
    }
    for (const st of stmts) st.inElse = underElse || (st.inElse && of.if && imports);
    for (let n = 0; n < stmts.length; n++) {
      const st = stmts[n]!;
      const start = lineStarts[st.i]!;
      const body = start + lineIndents[st.i]!;
      const next = n + 1 < stmts.length ? stmts[n + 1]!.i : i1;
      if (depth === 0 && keep.test(src.slice(body, Math.min(st.end, body + 400)))) continue;
      // a top-level try/if around imports is read whole (where the import block ends)
      if (
        depth === 0 &&
        (st.word === TRY || st.word === IF) &&
        /^[ \t]*(?:import|from)[ \t]/m.test(src.slice(body, st.end))
      )
        continue;
      // an autograd Function's forward is read whole (its ctx attributes, where its calls are)
      if (of.function && autogradForward(src, body)) continue;
      if (
        !hit(start, st.end) &&
        !(depth === 0 && look.test(src.slice(body, Math.min(st.end, body + 400)))) &&
        !(
          elseHit(start, st.end) &&
          (st.inElse || (importHit(start, st.end) && elseBetween(body, st.end)))
        )
      ) {
        if (st.end - body >= 4) blanks.push([body, st.end]);
        continue;
      }
      // look into the block: its header stays, its statements are judged one by one (past the
      // decorators and the `def`/`class` line of a decorated definition)
      let first = st.i + 1;
      while (first < next && lineIndents[first]! <= indent && lineWords[first - 1] === DECORATOR)
        first++;
      if (first < next && lineIndents[first]! > indent) {
        const header = lineStarts[first]!;
        // a definition a rule reports (its whole extent) or an autograd forward: read whole;
        // so is a block nested deeper than Python allows (100 levels), which the recursion
        // would follow as deep as the text goes
        if (wholeHit(start, header) || autogradForward(src, body) || depth >= MAX_DEPTH) continue;
        visit(first, next, st.end, depth + 1, st.inElse, {
          if: st.word === IF,
          function: st.word === CLASS && /\bFunction\b/.test(src.slice(body, header)),
        });
      }
    }
  };
  if (lineStarts.length)
    visit(0, lineStarts.length, src.length, 0, false, { if: false, function: false });
  if (!blanks.length) return { patches: [], ranges: [] };
  // only `pass` is read there: the rest is outside the parsed ranges (the text is not copied
  // with it written in: that copy was 7% of a scan's allocations)
  const patches = blanks.map((b) => b[0]);
  // the parser skips what is left out altogether (it still sees `pass` and the newline that
  // ends it): the text between is neither lexed nor kept in the tree
  const starts = newlineStarts(src);
  const point = (index: number) => pointAt(starts, index);
  const ranges: Range[] = [];
  let from = 0;
  for (let k = 0; k < blanks.length; k++) {
    const a = blanks[k]![0];
    let b = blanks[k]![1];
    // a run of left-out statements of one block (only indentation between them) is one `pass`
    // to the parser: the text keeps a `pass` for each, but only the first is lexed
    while (k + 1 < blanks.length && /^[ \t]*$/.test(src.slice(b, blanks[k + 1]![0])))
      b = blanks[++k]![1];
    const cut = a + 4;
    // up to the newline that ends the left-out statement
    let end = b;
    while (end > cut && src[end - 1] !== '\n') end--;
    if (end - 1 <= cut) continue;
    ranges.push({
      startIndex: from,
      endIndex: cut,
      startPosition: point(from),
      endPosition: point(cut),
    });
    from = end - 1;
  }
  ranges.push({
    startIndex: from,
    endIndex: src.length,
    startPosition: point(from),
    endPosition: point(src.length),
  });
  return { patches, ranges };
}

/** Python's own limit on nested blocks ("too many levels of indentation"). */
const MAX_DEPTH = 100;

/** `def forward(ctx, …)`: kept whole, its ctx attributes and dispatch are read as a whole. */
function autogradForward(src: string, body: number): boolean {
  return /^(?:@[^\n]*\n\s*)*def\s+forward\s*\(\s*ctx\b/.test(src.slice(body, body + 300));
}

/**
 * The parser's input for a text parsed in ranges: each read returns the text up to the end of
 * the range it starts in. Given the whole string, the parser copies a 10 KB chunk into its
 * memory at every jump from one range to the next — most of its input work once most of the
 * text is left out. Reads outside the ranges (a node's text) get the text as it is. `patches`:
 * where a left-out statement's `pass` is read instead of the source's first four characters.
 */
export function rangedInput(
  text: string,
  ranges: Range[],
  patches: number[],
): (index: number) => string {
  const ends = ranges.map((r) => r.endIndex);
  /** text[from, to) with each `pass` written over it. */
  const read = (from: number, to: number) => {
    // the first patch that ends past `from`
    let lo = 0;
    let hi = patches.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (patches[mid]! + 4 <= from) lo = mid + 1;
      else hi = mid;
    }
    if (lo === patches.length || patches[lo]! >= to) return text.slice(from, to);
    let out = '';
    let at = from;
    for (let k = lo; k < patches.length && patches[k]! < to; k++) {
      const p = patches[k]!;
      if (p > at) out += text.slice(at, p);
      const b = Math.min(p + 4, to);
      out += 'pass'.slice(Math.max(p, at) - p, b - p);
      at = b;
    }
    return at < to ? out + text.slice(at, to) : out;
  };
  return (index) => {
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! <= index) lo = mid + 1;
      else hi = mid;
    }
    const end = ends[lo]! > index ? ends[lo]! : text.length;
    return read(index, end);
  };
}

/** Blank and comment lines only (a licence header, an encoding line). */
const COMMENT_LINES = /^(?:[ \t\f]*(?:#[^\r\n]*)?\r?\n)*$/;

/**
 * The parsed ranges (none: the whole text) without the comment lines before the file's first
 * statement: most files open with a licence header, a seventh of the text the parser read, and
 * no rule reads a comment. The parser starts at the newline that ends them. A text with a lone
 * CR keeps them (a line end to the lexer, not to the parser).
 */
export function withoutLeadingComments(src: string, t: SourceTokens, ranges: Range[]): Range[] {
  const first = t.lineStarts[0];
  if (first === undefined || first < 2 || (ranges[0] && ranges[0].startIndex > 0)) return ranges;
  if (loneCarriageReturn(src)) return ranges;
  if (!COMMENT_LINES.test(src.slice(0, first))) return ranges;
  const from = first - 1;
  const starts = newlineStarts(src);
  const startPosition = pointAt(starts, from);
  if (!ranges.length)
    return [
      {
        startIndex: from,
        endIndex: src.length,
        startPosition,
        endPosition: pointAt(starts, src.length),
      },
    ];
  if (ranges[0]!.endIndex <= from) return ranges;
  return [{ ...ranges[0]!, startIndex: from, startPosition }, ...ranges.slice(1)];
}
