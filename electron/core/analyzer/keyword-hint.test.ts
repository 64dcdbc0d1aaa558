// The keyword-argument hint (`\b(?:device_ids|fused|…)\s*=`) is searched from each `=` of a file
// with a look-behind (analyze-file.ts, keywordHint): its matches must be exactly what the regex's
// own search finds (kept here as the reference) — on every sample and real port, and on the
// forms the reasoning is about: spaces and newlines before `=`, `==`, a name inside a longer one,
// attribute names, Unicode spaces, several on one line.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { realPythonFiles } from '../../../tests/support/python-samples';
import { compile, scan } from './analyze-file';
import { loadRules } from './rules';

const hint = compile(loadRules()).keywordHint!;

/** The regex's own search (a copy: the search from `=` is tied to the compiled regex object). */
function reference(text: string): [number, number, string][] {
  const re = new RegExp(hint.source, 'g');
  return [...text.matchAll(re)].map((m) => [m.index, m.index + m[0].length, m[0]]);
}

describe('the keyword hint searched from `=`', () => {
  it('finds what the regex finds in every sample and real port', () => {
    const files = realPythonFiles();
    let found = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      const want = reference(text);
      expect(scan(hint, text), f).toEqual(want);
      found += want.length;
    }
    expect(found).toBeGreaterThan(5);
  });

  it('finds what the regex finds around spaces, `==`, longer names and attributes', () => {
    const texts = [
      'DataLoader(ds, pin_memory=True, num_workers=2)',
      'opt = AdamW(p, fused  =  True)\nx = fused\n= 3',
      'if sparse == True and unfused = 1: pass',
      'cfg.num_warps=4; cfg.num_stages =\t3',
      'largest\u00a0= False, device_ids\u2028=[0]',
      'map_location=map_location=device',
      '=fused=sparse= =',
      'num_warps_total = 8\n_fused = True\nfused_ = False\n9fused = 1',
      '',
    ];
    for (const text of texts) expect(scan(hint, text), text).toEqual(reference(text));
    expect(scan(hint, texts[0]!).map((m) => m[2])).toEqual(['pin_memory=']);
  });
});
