// The lexer that finds statement lines, strings and comments before anything is parsed
// (source-tokens.ts) skips stretches of code and reads statement lines from the text's line
// starts: it must give exactly the tokens and statement lines of the regex lexer it replaced
// (one match per newline and bracket), kept below as the reference. Checked on every real sample
// here (and the real ports of ../shared/corpus-dev where that folder exists), on the constructs
// the scanner reasons about, and on many generated texts built from the characters that matter.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { realPythonFiles } from '../../../tests/support/python-samples';
import {
  COMMENT,
  F_STRING,
  OPEN_STRING,
  STRING,
  sourceTokens,
  WORDS,
  type SourceTokens,
} from './source-tokens';

// The reference: the regex lexer as it was (one match per newline, bracket, string, comment).
const TOKENS =
  /"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|$)|'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|$)|"(?:[^"\\\n]|\\[\s\S])*"?|'(?:[^'\\\n]|\\[\s\S])*'?|#[^\n]*|[()[\]{}]|\\\r?\n|\n/g;
const isPrefix = (k: number) =>
  k === 114 || k === 82 || k === 98 || k === 66 || k === 117 || k === 85 || k === 102 || k === 70;
const isWord = (k: number) =>
  (k >= 97 && k <= 122) || (k >= 65 && k <= 90) || (k >= 48 && k <= 57) || k === 95;

interface ReferenceTokens extends Omit<SourceTokens, 'lineStarts' | 'lineIndents' | 'lineWords'> {
  lines: { start: number; indent: number; word: string }[];
}

function referenceTokens(src: string): ReferenceTokens {
  const t: ReferenceTokens = {
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
      let start = m.index;
      let f = false;
      for (let n = 0; n < 2 && start > 0 && isPrefix(src.charCodeAt(start - 1)); n++) {
        const k = src.charCodeAt(start - 1);
        f ||= k === 102 || k === 70;
        start--;
      }
      if (start > 0 && isWord(src.charCodeAt(start - 1))) {
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
  }
  return t;
}

/** Both lexers' tokens in one comparable shape. */
const tokens = (t: Omit<SourceTokens, 'lineStarts' | 'lineIndents' | 'lineWords'>) =>
  t.starts.map((s, i) => `${s}-${t.ends[i]} ${t.kinds[i]} ${t.innerStarts[i]}-${t.innerEnds[i]}`);

/** The scanner keeps a line's word as its code in WORDS (0: any other word, or none). */
const wordCode = (word: string) => Math.max(0, (WORDS as readonly string[]).indexOf(word));

function same(src: string, what: string) {
  const t = sourceTokens(src);
  const ref = referenceTokens(src);
  expect(
    Array.from(t.lineStarts, (s, i) => `${s}+${t.lineIndents[i]}:${WORDS[t.lineWords[i]!]}`),
    what,
  ).toEqual(ref.lines.map((l) => `${l.start}+${l.indent}:${WORDS[wordCode(l.word)]}`));
  expect(tokens(t), what).toEqual(tokens(ref));
}

describe('source tokens, the stretch-skipping lexer', () => {
  it('finds what the regex lexer found on every real sample and port', () => {
    const files = realPythonFiles();
    expect(files.length).toBeGreaterThan(20);
    let lines = 0;
    for (const f of files) {
      const src = readFileSync(f, 'utf8');
      same(src, f);
      lines += sourceTokens(src).lineStarts.length;
    }
    // the samples alone hold this many (the reference corpus, when present, many more)
    expect(lines).toBeGreaterThan(500);
  });

  it('reads strings, comments, brackets and continuations as the regex did', () => {
    const cases = [
      // unterminated strings: a one-quote string ends at its line, a triple one at the end
      'x = "abc\ny = 1\n',
      "x = 'abc\\\ny = 1\n",
      'x = """abc\ny = 1\n',
      "x = '''abc'' \n",
      'x = """abc""',
      // a lone backslash at the end inside a triple-quoted string: read as `""` then `"…`
      'x = """abc\\',
      "x = '''a\\",
      // an escaped quote at the very end of the text
      'x = """\\"""',
      'x = "abc\\"',
      'x = "\\',
      // CRLF, tabs, continuations
      'if a:\r\n\tb = 1\r\n\tc = (\r\n\t  2)\r\nd = 3 \\\r\n  + 4\r\n',
      'x = 1 + \\\n    2\ny = 3\n\\\n',
      'x = a \\ b\n\\',
      // nested brackets across lines, a stray closing bracket
      'f(a, [b,\n  {c: (d,\n e)}],\n g)\nh = 1\n)\n]\ni = 2\n',
      // f-strings and prefixes, a name before a quote
      'x = f"{a!r:>{w}}" + rb\'\\x00\' + Rb"raw" + u"u" + F"""\n{b}\n"""\nxr"s" + br"t"\n',
      'x = f"""a"b""c"""""\n"""""" + \'\'\'\'\'\'\n',
      // comments holding quotes and brackets, a comment at the end without a newline
      '# "not (a string\nx = 1  # \'\nclass A:  # )\n    @dec\n    def f(self): pass\n#end',
      // words: lower case and `_` only, `@` alone, blank and comment lines start nothing
      '  \n\t\n# c\n@property\nClass = 1\n_x = 2\nasync_def = 3\n9 = 4\n\u00e9t\u00e9 = 5\n',
      'if x:\n  pass\nelif y:\n  pass\nelse:\n  pass\ntry:\n  import a\nexcept E:\n  from b import c\n',
      'finally:\n  case = 1\nclass A: pass\niffy = 1\nelse_ = 2\nimports = 3\nclasses = 4\nfrom_ = 5\n',
      '',
      '\n',
      '"',
      "'''",
    ];
    for (const src of cases) same(src, JSON.stringify(src));
    const kinds = sourceTokens('a = "x" + f"y" + "z\n# c\n').kinds;
    expect(kinds).toEqual([STRING, F_STRING, OPEN_STRING, COMMENT]);
  });

  it('finds what the regex lexer found on generated texts of the characters that matter', () => {
    // a fixed-seed generator (the same texts every run) over quotes, prefixes, escapes, brackets,
    // comments, line ends and indentation
    const pieces = [...'"\'\\\n\r#()[]{} \ta@rbfFx1\u00e9', '"""', "'''", '\r\n'];
    pieces.push('if', 'else', 'elif', 'try', 'except', 'class', 'import', 'from', 'case');
    let seed = 19;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let n = 0; n < 4000; n++) {
      let src = '';
      const len = Math.floor(next() * 40);
      for (let k = 0; k < len; k++) src += pieces[Math.floor(next() * pieces.length)];
      same(src, JSON.stringify(src));
    }
  });
});
