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

/** A statement line: where it starts, its indentation and first word. */
interface Line {
  start: number;
  indent: number;
  word: string;
}

// strings (with escapes, triple-quoted across lines), comments, brackets, continuations, newlines
const TOKENS =
  /"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|$)|'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|$)|"(?:[^"\\\n]|\\[\s\S])*"?|'(?:[^'\\\n]|\\[\s\S])*'?|#[^\n]*|[()[\]{}]|\\\r?\n|\n/g;

/** The lines that start a logical statement: outside strings and brackets, not continued. */
function statementLines(src: string): Line[] {
  const lines: Line[] = [];
  let depth = 0;
  const lineAt = (at: number) => {
    let i = at;
    while (src[i] === ' ' || src[i] === '\t') i++;
    const c = src[i];
    if (c === undefined || c === '\n' || c === '\r' || c === '#') return;
    let e = i;
    if (c === '@') e++;
    else
      for (let k = src.charCodeAt(e); (k >= 97 && k <= 122) || k === 95; k = src.charCodeAt(++e));
    lines.push({ start: at, indent: i - at, word: src.slice(i, e) });
  };
  lineAt(0);
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(src); m; m = TOKENS.exec(src)) {
    const t = m[0];
    const ch = t[0];
    if (ch === '\n') {
      if (depth === 0) lineAt(m.index + 1);
    } else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
    // strings, comments and `\` continuations are skipped whole
  }
  return lines;
}

const CONTINUES = new Set(['else', 'elif', 'except', 'finally', 'case']);

/**
 * The source with every statement that holds no candidate replaced by `pass` (at any depth:
 * a definition or block that holds one keeps its header and is looked into), or the source
 * itself when nothing is left out. `candidates` are offsets into the source, any order; `keep`
 * marks top-level statements kept whole (read by the analysis as a whole: the entry point, enums).
 */
export function relevantSource(
  src: string,
  candidates: number[],
  keep: RegExp,
): { text: string; ranges: Range[] } {
  if (src.length < 2000) return { text: src, ranges: [] };
  const lines = statementLines(src);
  const sorted = Float64Array.from(candidates).sort();
  const hit = (start: number, end: number) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length && sorted[lo]! < end;
  };
  const blanks: [number, number][] = [];
  /** The statements of lines[i0, i1) (a block, at the indentation of its first line) up to `to`. */
  const visit = (i0: number, i1: number, to: number, depth: number) => {
    const indent = lines[i0]!.indent;
    // statements at this indentation: [line index, end offset]
    const stmts: { i: number; word: string; end: number }[] = [];
    for (let i = i0; i < i1; i++) {
      const l = lines[i]!;
      if (l.indent > indent) continue;
      const last = stmts.at(-1);
      // a clause of the enclosing statement (`except:`, `else:`) ends this block's statement
      if (l.indent < indent) {
        if (last && last.end > l.start) last.end = l.start;
        continue;
      }
      const word = l.word.startsWith('@') ? '@' : l.word;
      if (last && (CONTINUES.has(word) || last.word === '@')) {
        if (last.word === '@') last.word = word;
        continue;
      }
      if (last && last.end > l.start) last.end = l.start;
      stmts.push({ i, word, end: to });
    }
    for (let n = 0; n < stmts.length; n++) {
      const st = stmts[n]!;
      const l = lines[st.i]!;
      const body = l.start + l.indent;
      const next = n + 1 < stmts.length ? stmts[n + 1]!.i : i1;
      if (depth === 0 && keep.test(src.slice(body, Math.min(st.end, body + 400)))) continue;
      // a top-level try/if around imports is read whole (where the import block ends)
      if (
        depth === 0 &&
        (st.word === 'try' || st.word === 'if') &&
        /^[ \t]*(?:import|from)[ \t]/m.test(src.slice(body, st.end))
      )
        continue;
      if (!hit(l.start, st.end)) {
        if (st.end - body >= 4) blanks.push([body, st.end]);
        continue;
      }
      // look into the block: its header stays, its statements are judged one by one
      if (next > st.i + 1 && lines[st.i + 1]!.indent > indent) {
        if (autogradForward(src, body)) continue;
        visit(st.i + 1, next, st.end, depth + 1);
      }
    }
  };
  if (lines.length) visit(0, lines.length, src.length, 0);
  if (!blanks.length) return { text: src, ranges: [] };
  const out: string[] = [];
  let at = 0;
  for (const [a, b] of blanks) {
    // only `pass` is read there: the rest is outside the parsed ranges
    out.push(src.slice(at, a), 'pass', src.slice(a + 4, b));
    at = b;
  }
  out.push(src.slice(at));
  // the parser skips what is left out altogether (it still sees `pass` and the newline that
  // ends it): the text between is neither lexed nor kept in the tree
  const starts = [0];
  for (let i = src.indexOf('\n'); i >= 0; i = src.indexOf('\n', i + 1)) starts.push(i + 1);
  const point = (index: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return { row: lo, column: index - starts[lo]! };
  };
  const ranges: Range[] = [];
  let from = 0;
  for (const [a, b] of blanks) {
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
  return { text: out.join(''), ranges };
}

/** `def forward(ctx, …)`: kept whole, its ctx attributes and dispatch are read as a whole. */
function autogradForward(src: string, body: number): boolean {
  return /^(?:@[^\n]*\n\s*)*def\s+forward\s*\(\s*ctx\b/.test(src.slice(body, body + 300));
}
