// The string rules' matches are searched inside the file's strings only (stringMatches): they
// must be exactly what a search of the whole file keeps (the previous way, kept here as the
// reference) — on every sample and real port, and on strings the reasoning is about: prefixes,
// f-strings, unclosed strings (a match may reach past their end), comments, code around them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { realPythonFiles } from '../../../tests/support/python-samples';
import { compile, stringMatches } from './analyze-file';
import { loadRules } from './rules';
import { COMMENT, sourceTokens, STRING, tokenAt } from './source-tokens';

const c = compile(loadRules());

/** The whole-file search, filtered to the strings a rule can take. */
function reference(text: string): [number, number, string][] {
  const re = new RegExp(c.stringHint!.source, 'g');
  const t = sourceTokens(text);
  const out: [number, number, string][] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const [start, end] = [m.index, m.index + m[0].length];
    if (!m[0].length) re.lastIndex++;
    const i = tokenAt(t, start);
    if (i < 0 || t.kinds[i] === COMMENT || end > t.ends[i]!) continue;
    if (t.kinds[i] === STRING) {
      const inner = text.slice(t.innerStarts[i], t.innerEnds[i]);
      if (!c.strings.some((s) => s.re.test(inner))) continue;
    }
    out.push([start, end, m[0]]);
  }
  return out;
}

describe("the string rules' matches", () => {
  it('are those of a whole-file search on every sample and real port', () => {
    const files = realPythonFiles();
    let found = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      const got = stringMatches(c, text);
      expect(got, f).toEqual(reference(text));
      found += got.length;
    }
    // the samples alone hold this many (the reference corpus, when present, many more)
    expect(found).toBeGreaterThan(30);
  });

  it('are those of a whole-file search on strings written every way', () => {
    const texts = [
      'x = torch.device("cuda")  # "cuda" in a comment\ny = "cuda:0"\n',
      'a = rb"nccl"; b = f"cuda:{rank}"; c = u\'NCCL_DEBUG\'\n',
      'cmd = "nvidia-smi -L"\nopen = "run nvidia-smi\nnext = 1\n',
      'name = xr"cuda"\n',
      'flags = ["--enable_xformers_memory_efficient_attention", "-inf", "inf"]\n',
      'doc = """\nuse cuda here: cuda\n"""\nsrc = "kernel.cu"\nm = \'flash_attention_2\'\n',
      'bad = "cuda\n',
      '"cuda" "nccl" \'\'\n',
    ];
    for (const text of texts) expect(stringMatches(c, text), text).toEqual(reference(text));
    expect(stringMatches(c, texts[0]!).map((m) => m[2])).toEqual(['cuda', 'cuda:0']);
  });
});
