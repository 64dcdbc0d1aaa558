// An extension bound by a loader call (`ext = ext_loader.load_ext('_ext', …)`) is searched for
// only at the line starts the file's loader calls lead back to (loadedMatches): the matches must
// be those of trying every line start — on every sample and real port, and on the ways the
// assignment can be written.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { realPythonFiles } from '../../../tests/support/python-samples';
import { LOADED, loadedMatches } from './analyze-file';

/** Every line start tried, as a plain exec loop does. */
function reference(text: string): [number, string, string | undefined][] {
  const re = new RegExp(LOADED.source, LOADED.flags);
  const out: [number, string, string | undefined][] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push([m.index, m[0], m[1]]);
    if (!m[0].length) re.lastIndex++;
  }
  return out;
}
const found = (text: string) =>
  loadedMatches(text).map((m): [number, string, string | undefined] => [m.index, m[0], m[1]]);

describe('loader-bound extensions', () => {
  it('are found as trying every line start finds them, on every sample and port', () => {
    const files = realPythonFiles();
    let n = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(found(text), f).toEqual(reference(text));
      n += found(text).length;
    }
    expect(n).toBeGreaterThan(0);
  });

  it('whichever way the assignment is written', () => {
    const texts = [
      "ext = ext_loader.load_ext('_ext', ['nms'])\n",
      "    ext_module = mmcv.utils.ext_loader.load_ext(\n        '_ext', ['roi_align'])\n",
      "\tcuda_ops = load(name='ops', sources=['a.cu'])\n",
      'x == load(y)\na += load(z)\nb: T = load(w)\n',
      'state = torch.load(path)\nmodel = load_inline(name="k", cpp_sources=[s])\n',
      "ext\n= load_ext('x')\n",
      "ops = load_ext ('x')\r\nother = load('y')\r\n",
      '# ext = load_ext("in a comment")\ns = "y = load(1)"\n',
      // exllamav2's layout: the parenthesis on the line after a backslash
      "    kernels = load \\\n    (\n        name = 'k',\n    )\n",
    ];
    for (const text of texts) expect(found(text), text).toEqual(reference(text));
    expect(found(texts[4]!).map((m) => m[2])).toEqual(['state', 'model']);
    expect(found(texts[8]!).map((m) => m[2])).toEqual(['kernels']);
  });
});
