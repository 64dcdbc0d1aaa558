// Line-anchored searches tried only at line starts (line-matches.ts) must find exactly what the
// regex finds scanning every offset: checked on every real sample here (and the real ports of
// ../shared/corpus-dev where that folder exists) with the scanner's own `/^…/gm` searches, and on
// the cases the shortcut reasons about: a match spanning lines, `\r` line ends, an empty match, a
// pattern with a top-level alternative.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CTX_ASSIGNMENT, IMPORT_HINT, RAISE, TEXT_IMPORT } from './analyze-file';
import { allMatches, wordLed } from './line-matches';
import { TOP_IMPORT } from './python-file';
import { realPythonFiles } from '../../../tests/support/python-samples';

/** What a plain `exec` loop over every offset finds: [index, matched text, first group]. */
function byExec(re: RegExp, text: string): [number, string, string | undefined][] {
  const plain = new RegExp(re.source, re.flags);
  const out: [number, string, string | undefined][] = [];
  for (let m = plain.exec(text); m; m = plain.exec(text)) {
    out.push([m.index, m[0], m[1]]);
    if (m[0].length === 0) plain.lastIndex++;
  }
  return out;
}
const found = (re: RegExp, text: string) =>
  allMatches(re, text).map((m): [number, string, string | undefined] => [m.index, m[0], m[1]]);

// the scanner's line-anchored searches (analyze-file.ts, python-file.ts)
const SEARCHES = [
  /^[ \t]*(?:import|from)[ \t]/gm,
  /^[ \t]*(?:import[ \t]+([^\n#;]+)|from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+))/gm,
  /^[ \t]*(\w+)\s*=\s*[\w.]*?\b(?:load_ext|load|load_inline)(?:\s|\\\r?\n)*\(/gm,
  /^[ \t]*raise\b/gm,
  /^[ \t]*ctx\.\w+\s*=/gm,
  /^(?:from|import)\s+([A-Za-z_]\w*)/gm,
];

// the scanner's own declarations of those searches with the literal that starts their lines
const LED = [IMPORT_HINT, TEXT_IMPORT, RAISE, CTX_ASSIGNMENT, TOP_IMPORT];

describe('line-anchored matches', () => {
  const files = realPythonFiles(400);

  it('are the regex’s own matches on every real sample', () => {
    expect(files.length).toBeGreaterThan(10);
    let matched = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const re of [...SEARCHES, ...LED]) {
        const want = byExec(re, text);
        expect(found(re, text), `${file} ${re}`).toEqual(want);
        matched += want.length;
      }
    }
    expect(matched).toBeGreaterThan(100);
  });

  it('skip the line starts inside a match that spans lines', () => {
    const text = 'from a import (\nimport_x,\n  from_y)\nimport b\n';
    const re = SEARCHES[1]!;
    expect(found(re, text)).toEqual(byExec(re, text));
    expect(found(re, text).map(([at]) => at)).toEqual([0, text.indexOf('import b')]);
  });

  it('keep `^` after \\r and U+2028 line ends', () => {
    for (const text of ['x = 1\r  raise E\r\n', 'x = 1\u2028raise E\n', 'x\u2029raise\nraise']) {
      const re = SEARCHES[3]!;
      expect(found(re, text)).toEqual(byExec(re, text));
      expect(found(re, text).length).toBeGreaterThan(0);
    }
  });

  it('tried only where a declared lead starts the line: the same matches', () => {
    const text = [
      'import a',
      '\t  from b import c',
      'x = 1  # import d',
      's = "from e import f"',
      '   raise X',
      'y = raise_it()',
      'fromage = 1',
      '',
      'import',
      'from',
    ].join('\n');
    for (const re of LED) expect(found(re, text), String(re)).toEqual(byExec(re, text));
    expect(found(LED[0]!, text).map(([at]) => at)).toEqual([0, text.indexOf('\t  from b')]);
    expect(found(LED[2]!, text).length).toBe(1);
    // other line ends: the plain regex decides
    for (const t of ['a\r  raise E\r\n', 'a\u2028raise E'])
      expect(found(LED[2]!, t)).toEqual(byExec(LED[2]!, t));
  });

  it('move on after an empty match and leave a top-level alternative to the plain regex', () => {
    const text = 'a\n\nb\n  c';
    for (const re of [/^[ \t]*/gm, /^b|c/gm, /^(?:b|c)/gm, /^[|]?\w/gm])
      expect(found(re, text), String(re)).toEqual(byExec(re, text));
    expect(found(/^b|c/gm, text).map(([at]) => at)).toEqual([3, 7]);
  });
});

describe('word-led matches', () => {
  // the scanner's searches that start with a name (chainRegex, the definition hint, an
  // extension's call sites), declared with that name: tried only where it is written
  const led = () => [
    wordLed(
      /\b(?:torch(?:\s|\\\n)*\.(?:\s|\\\n)*(?:cuda|backends(?:\s|\\\n)*\.(?:\s|\\\n)*cudnn)\b)/g,
      ['torch'],
    ),
    wordLed(/\bdef\s+(?=\w*(?:xformers|flash_attn))/g, ['def']),
    wordLed(/\b(?:_C|_ext)(?:\s|\\\n)*\./g, ['_C', '_ext']),
    wordLed(/\bmulti_processor_count\b|\bmax_num_regs\b/g, [
      'multi_processor_count',
      'max_num_regs',
    ]),
  ];

  it('are the regex’s own matches on every real sample', () => {
    const files = realPythonFiles(400);
    let matched = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const re of led()) {
        const want = byExec(re, text);
        expect(found(re, text), `${file} ${re}`).toEqual(want);
        matched += want.length;
      }
    }
    expect(matched).toBeGreaterThan(100);
  });

  it('keep \\b, skip a word inside the match before, and see a name split by a continuation', () => {
    const text = [
      'mytorch.cuda.x = torch.cuda',
      'torch . \\',
      '  backends.cudnn',
      'def flash_attn_forward(): pass',
      'undef xformers_x',
      'x = a._C._ext.y  # _C._ext',
      'torch.cudas',
    ].join('\n');
    for (const re of led()) expect(found(re, text), String(re)).toEqual(byExec(re, text));
    expect(found(led()[0]!, text).map(([at]) => at)).toEqual([
      text.indexOf('torch.cuda\n'),
      text.indexOf('torch . '),
    ]);
    expect(found(led()[2]!, text).length).toBe(3);
  });
});
