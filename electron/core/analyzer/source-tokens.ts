/**
 * One pass of a cheap lexer over a Python file, before anything is parsed: where its logical
 * statements start (outside strings and brackets), and where its strings and comments are. The
 * text searches that choose what to parse use it to drop candidates no rule can take there —
 * `.cuda()` in a comment, "inference" in a docstring — so those statements are not parsed.
 */

import { newlineStarts } from './line-matches';

// The first words of statement lines that the parse-range pass tells apart (relevant.ts): a
// line's word is its leading run of `[a-z_]` (`@` alone for a decorator), kept as one of these
// codes; any other word, or none, is 0. The same list as text, by code: WORDS.
export const DECORATOR = 1;
export const IF = 2;
export const ELIF = 3;
export const ELSE = 4;
export const TRY = 5;
export const EXCEPT = 6;
export const FINALLY = 7;
export const CASE = 8;
export const IMPORT = 9;
export const FROM = 10;
export const CLASS = 11;
export const WORDS = [
  '',
  '@',
  'if',
  'elif',
  'else',
  'try',
  'except',
  'finally',
  'case',
  'import',
  'from',
  'class',
] as const;

/** The file's lexical layout: statement lines, and its string and comment tokens in order. */
export interface SourceTokens {
  /** Statement line i: where it starts, its indentation and its first word (index in WORDS). */
  lineStarts: number[];
  lineIndents: number[];
  lineWords: number[];
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

// A string from its quote: the alternatives (and their order) of the lexer's regex before it
// read code in stretches — triple-quoted across lines and to the end of the text when unclosed,
// one-quote to its line's end when unclosed, escapes read whole.
const STRING_AT =
  /"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|$)|'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|$)|"(?:[^"\\\n]|\\[\s\S])*"?|'(?:[^'\\\n]|\\[\s\S])*'?/y;

/**
 * A stretch of code holding no token: up to the next quote, `#`, backslash or bracket — past a
 * bracket that closes on its line with nothing but code and brackets between (up to three deep),
 * as those leave the depth as it was and hold no statement start. Written `p*(?:group p*)*`, so
 * the plain characters run in the regex engine's tight loop and nothing is tried twice. Newlines
 * are passed over: where they start statements is read from the text's line starts.
 */
const PLAIN = `[^"'#\\\\()[\\]{}\\n]*`;
const groups = (inner: string) => `\\(${inner}\\)|\\[${inner}\\]|\\{${inner}\\}`;
const runs = (g: string) => `${PLAIN}(?:(?:${g})${PLAIN})*`;
const NESTED = groups(runs(groups(runs(groups(PLAIN)))));
const CODE = new RegExp(`[^"'#\\\\()[\\]{}]*(?:(?:${NESTED})[^"'#\\\\()[\\]{}]*)*`, 'y');

const isPrefix = (k: number) =>
  k === 114 || k === 82 || k === 98 || k === 66 || k === 117 || k === 85 || k === 102 || k === 70; // rRbBuUfF
const isWord = (k: number) =>
  (k >= 97 && k <= 122) || (k >= 65 && k <= 90) || (k >= 48 && k <= 57) || k === 95;

const CODES = new Map<string, number>(WORDS.map((w, i) => [w, i]));

/**
 * The statement line starting at `at`: its indentation × 16 + its word's index in WORDS, or -1
 * when the line is blank or a comment. One read of each character (a call each, before V8 has
 * optimised this), and a word looked up only when it can be one of WORDS.
 */
function lineAt(src: string, at: number): number {
  const n = src.length;
  let i = at;
  let c = 0;
  while (i < n) {
    c = src.charCodeAt(i);
    if (c !== 32 && c !== 9) break;
    i++;
  }
  // the end of the text, a blank line or a comment line starts no statement
  if (i >= n || c === 10 || c === 13 || c === 35) return -1;
  const indent = (i - at) * 16;
  if (c === 64) return indent + DECORATOR;
  // WORDS start with c, e, f, i or t
  if (c !== 99 && c !== 101 && c !== 102 && c !== 105 && c !== 116) return indent;
  let e = i + 1;
  while (e < n) {
    const k = src.charCodeAt(e);
    if ((k >= 97 && k <= 122) || k === 95) e++;
    else break;
  }
  const len = e - i;
  return indent + (len < 2 || len > 7 ? 0 : (CODES.get(src.slice(i, e)) ?? 0));
}

/**
 * One pass over the text, a token at a time: a regex skips each stretch of code up to the next
 * string, comment, backslash or bracket (closed brackets on a line included), and the line
 * starts of the stretches met at depth 0 are statement lines. The tokens and lines are exactly
 * those of the lexer that matched every newline and bracket (kept in source-tokens.test.ts as
 * the reference), at a fraction of its matches: a match cost thousands of instructions, mostly
 * before V8 had optimised the loop.
 */
export function sourceTokens(src: string): SourceTokens {
  const n = src.length;
  const starts = newlineStarts(src);
  // plain arrays: from code V8 has not optimised yet they were no slower than typed ones to fill,
  // and faster to read (the token arrays as Int32Arrays cost +0.18 G)
  const lineStarts: number[] = [];
  const lineIndents: number[] = [];
  const lineWords: number[] = [];
  let info = lineAt(src, 0);
  if (info >= 0) {
    lineStarts.push(0);
    lineWords.push(info & 15);
    lineIndents.push((info - (info & 15)) / 16);
  }
  const t: SourceTokens = {
    lineStarts,
    lineIndents,
    lineWords,
    starts: [],
    ends: [],
    kinds: [],
    innerStarts: [],
    innerEnds: [],
  };
  // the next line start not yet passed (starts[0] is the text's start)
  let line = 1;
  let depth = 0;
  let i = 0;
  while (i < n) {
    CODE.lastIndex = i;
    CODE.test(src);
    const to = CODE.lastIndex;
    if (depth === 0) {
      // the newlines of a stretch at depth 0 end statement lines (not those in brackets: the
      // regex passes over a bracket only where it closes on its line)
      while (line < starts.length && starts[line]! <= i) line++;
      for (; line < starts.length && starts[line]! <= to; line++) {
        info = lineAt(src, starts[line]!);
        if (info < 0) continue;
        lineStarts.push(starts[line]!);
        lineWords.push(info & 15);
        lineIndents.push((info - (info & 15)) / 16);
      }
    }
    i = to;
    if (i >= n) break;
    const k = src.charCodeAt(i);
    if (k === 40 || k === 91 || k === 123) {
      depth++;
      i++;
    } else if (k === 41 || k === 93 || k === 125) {
      if (depth > 0) depth--;
      i++;
    } else if (k === 35) {
      let end = src.indexOf('\n', i);
      if (end < 0) end = n;
      t.starts.push(i);
      t.ends.push(end);
      t.kinds.push(COMMENT);
      t.innerStarts.push(i);
      t.innerEnds.push(end);
      i = end;
    } else if (k === 34 || k === 39) {
      STRING_AT.lastIndex = i;
      STRING_AT.test(src);
      const end = STRING_AT.lastIndex;
      // the prefix (r, b, u, f and pairs) belongs to the string; a word before it does not
      let start = i;
      let f = false;
      for (let p = 0; p < 2 && start > 0 && isPrefix(src.charCodeAt(start - 1)); p++) {
        const c = src.charCodeAt(start - 1);
        f ||= c === 102 || c === 70;
        start--;
      }
      if (start > 0 && isWord(src.charCodeAt(start - 1))) {
        // `xr"…"` is a name then a string: the prefix was part of a name
        start = i;
        f = false;
      }
      const triple = end - i >= 3 && src.charCodeAt(i + 1) === k && src.charCodeAt(i + 2) === k;
      const quote = triple ? 3 : 1;
      // closed: ends in its quotes after its opening ones (an escaped quote at the very end of
      // the text counts, as it did for the regex)
      let closed = end - i >= 2 * quote;
      for (let c = 1; closed && c <= quote; c++) closed = src.charCodeAt(end - c) === k;
      t.starts.push(start);
      t.ends.push(end);
      t.kinds.push(f ? F_STRING : closed ? STRING : OPEN_STRING);
      t.innerStarts.push(i + quote);
      t.innerEnds.push(end - (closed ? quote : 0));
      i = end;
    } else {
      // a backslash: before a line end, a continuation passed over whole (its newline starts no
      // statement); elsewhere one character of code
      const next = i + 1 < n ? src.charCodeAt(i + 1) : 0;
      if (next === 10) i += 2;
      else if (next === 13 && i + 2 < n && src.charCodeAt(i + 2) === 10) i += 3;
      else i++;
    }
  }
  return t;
}

/**
 * Every branch of the pass, taken once as the module loads. V8 optimises the pass within the
 * first large file, and a branch it has not seen taken by then (a `\` continuation, an unclosed
 * string, a word the parse-range pass tells apart) throws the optimised code away at its first
 * use, to be compiled again: each compilation costs more than lexing a whole file.
 */
const PRIMER = [
  '@decorator',
  'class A(B):  # comment',
  "    '''doc''' if x else elif_",
  '    def f(self, a=[1, {2: (3)}], *b):',
  '        try:',
  '            import os',
  '            from os import path',
  '        except E:',
  '            pass',
  '        finally:',
  '            x = f"{a}" + rb\'b\' + Rb"c" + "d\\"e" + \\',
  '              u"""e""" + (',
  '                1) + \\\r',
  '            case = 1',
  '        y = "open',
  ')]}',
  '\t"""open',
].join('\n');
for (let n = 0; n < 3; n++) sourceTokens(PRIMER);

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
