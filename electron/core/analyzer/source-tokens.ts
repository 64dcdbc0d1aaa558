/**
 * One pass of a cheap lexer over a Python file, before anything is parsed: where its logical
 * statements start (outside strings and brackets), and where its strings and comments are. The
 * text searches that choose what to parse use it to drop candidates no rule can take there —
 * `.cuda()` in a comment, "inference" in a docstring — so those statements are not parsed.
 */

/** A statement line: where it starts, its indentation and first word. */
export interface StatementLine {
  start: number;
  indent: number;
  word: string;
}

/** The file's lexical layout: statement lines, and its string and comment tokens in order. */
export interface SourceTokens {
  lines: StatementLine[];
  /** Token i spans [starts[i], ends[i]) — a string from its prefix (`rb"…"`), or a comment. */
  starts: number[];
  ends: number[];
  /** 0 comment, 1 string, 2 f-string (its interpolations hold code), 3 unterminated string. */
  kinds: number[];
  /** For strings: where the text between the quotes starts and ends. */
  innerStarts: number[];
  innerEnds: number[];
}

export const COMMENT = 0;
export const STRING = 1;
export const F_STRING = 2;
export const OPEN_STRING = 3;

// strings (with escapes, triple-quoted across lines), comments, brackets, continuations, newlines
const TOKENS =
  /"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|$)|'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|$)|"(?:[^"\\\n]|\\[\s\S])*"?|'(?:[^'\\\n]|\\[\s\S])*'?|#[^\n]*|[()[\]{}]|\\\r?\n|\n/g;

const isPrefix = (k: number) =>
  k === 114 || k === 82 || k === 98 || k === 66 || k === 117 || k === 85 || k === 102 || k === 70; // rRbBuUfF
const isWord = (k: number) =>
  (k >= 97 && k <= 122) || (k >= 65 && k <= 90) || (k >= 48 && k <= 57) || k === 95;

export function sourceTokens(src: string): SourceTokens {
  const t: SourceTokens = {
    lines: [],
    starts: [],
    ends: [],
    kinds: [],
    innerStarts: [],
    innerEnds: [],
  };
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
    t.lines.push({ start: at, indent: i - at, word: src.slice(i, e) });
  };
  lineAt(0);
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(src); m; m = TOKENS.exec(src)) {
    const tok = m[0];
    const ch = tok[0];
    if (ch === '\n') {
      if (depth === 0) lineAt(m.index + 1);
    } else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
    else if (ch === '#') {
      t.starts.push(m.index);
      t.ends.push(m.index + tok.length);
      t.kinds.push(COMMENT);
      t.innerStarts.push(m.index);
      t.innerEnds.push(m.index + tok.length);
    } else if (ch === '"' || ch === "'") {
      // the prefix (r, b, u, f and pairs) belongs to the string; a word before it does not
      let start = m.index;
      let f = false;
      for (let n = 0; n < 2 && start > 0 && isPrefix(src.charCodeAt(start - 1)); n++) {
        const k = src.charCodeAt(start - 1);
        f ||= k === 102 || k === 70;
        start--;
      }
      if (start > 0 && isWord(src.charCodeAt(start - 1))) {
        // `xr"…"` is a name then a string: the prefix was part of a name
        start = m.index;
        f = false;
      }
      const quote = tok.startsWith(ch.repeat(3)) && tok.length >= 3 ? 3 : 1;
      const closed = tok.length >= 2 * quote && tok.endsWith(ch.repeat(quote));
      t.starts.push(start);
      t.ends.push(m.index + tok.length);
      t.kinds.push(f ? F_STRING : closed ? STRING : OPEN_STRING);
      t.innerStarts.push(m.index + quote);
      t.innerEnds.push(m.index + tok.length - (closed ? quote : 0));
    }
    // `\` continuations are skipped whole
  }
  return t;
}

/** The token holding offset `at`, or -1 (code). */
export function tokenAt(t: SourceTokens, at: number): number {
  const ends = t.ends;
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo < ends.length && t.starts[lo]! <= at ? lo : -1;
}

/**
 * Offset `at` can hold code: it is outside every comment and closed plain string (an f-string's
 * interpolations are code, and an unclosed string is left to the parser, so both count).
 */
export function inCode(t: SourceTokens, at: number): boolean {
  const i = tokenAt(t, at);
  return i < 0 || (t.kinds[i] !== COMMENT && t.kinds[i] !== STRING);
}
