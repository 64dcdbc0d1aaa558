// The chain hint runs one regex per imported name and merges their matches (analyze-file.ts,
// chainMatches); it must find exactly what one alternation of all the file's names finds —
// checked on every real sample here and on the real ports of ../shared/corpus-dev where that
// folder exists, with the file's own imports, and on names whose chains meet or nest.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chainMatches, chainRegex, compile, planBindings } from './analyze-file';
import { loadRules } from './rules';
import { inCode, sourceTokens } from './source-tokens';
import { realPythonFiles } from '../../../tests/support/python-samples';

const c = compile(loadRules());

/** One alternation of every imported name's chains, scanned once, kept where code is. */
function byAlternation(aliases: Map<string, string>, text: string): [number, number, string][] {
  const parts = [...aliases]
    .map(([local, full]) => chainRegex(c, local, full)?.source)
    .filter((s): s is string => !!s);
  if (!parts.length) return [];
  const re = new RegExp(parts.map((p) => `(?:${p})`).join('|'), 'g');
  const tokens = sourceTokens(text);
  const out: [number, number, string][] = [];
  for (let m = re.exec(text); m; m = re.exec(text))
    if (inCode(tokens, m.index)) out.push([m.index, m.index + m[0].length, m[0]]);
  return out;
}

describe('chain hint, one regex per imported name', () => {
  it('finds what one alternation finds, on every real sample and port', () => {
    const files = realPythonFiles();
    expect(files.length).toBeGreaterThan(20);
    let compared = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const { aliases } = planBindings(text, c);
      const want = byAlternation(aliases, text);
      expect(chainMatches(c, aliases, text), file).toEqual(want);
      compared += want.length;
    }
    expect(compared).toBeGreaterThan(50);
  });

  it('keeps the name imported first where two chains start at one place, and never overlaps', () => {
    const text = [
      'import torch',
      'from torch import cuda',
      'import torch.cuda as tc',
      'torch.cuda.synchronize()',
      'cuda.synchronize()',
      'tc.synchronize(); x = torch . cuda . amp',
      '# torch.cuda.empty_cache() in a comment',
      's = "torch.cuda in a string"',
    ].join('\n');
    const aliases = new Map([
      ['torch', 'torch'],
      ['cuda', 'torch.cuda'],
      ['tc', 'torch.cuda'],
    ]);
    const got = chainMatches(c, aliases, text);
    expect(got).toEqual(byAlternation(aliases, text));
    // `cuda` inside `torch.cuda` is part of that chain, not a chain of its own
    const starts = got.map(([start]) => text.slice(start, start + 5));
    // the import of torch.cuda, the call, and the chain written with spaces
    expect(starts.filter((s) => s === 'torch').length).toBe(3);
    expect(got.some(([start]) => text.slice(start - 6, start) === 'torch.')).toBe(false);
    for (let i = 1; i < got.length; i++) expect(got[i]![0]).toBeGreaterThanOrEqual(got[i - 1]![1]);
  });
});
