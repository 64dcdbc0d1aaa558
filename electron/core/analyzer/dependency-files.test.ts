// conda's environment.yml as users write it, and as they should not: what is found, what each
// fix writes, and that nothing in a malformed file stops the reader.
import { describe, expect, it } from 'vitest';
import type { Edit } from './analyze-file';
import {
  type AddFinding,
  isCondaEnvironment,
  scanCondaEnvironment,
  scanPackageDependencies,
} from './dependency-files';

interface Found {
  ruleId: string;
  line: number;
  column: number;
  text?: string;
  edits?: Edit[];
}

function scan(src: string): Found[] {
  const found: Found[] = [];
  const finding: AddFinding = (ruleId, _file, at, opts) =>
    found.push({
      ruleId,
      line: at.line,
      column: at.column,
      text: opts?.vars?.text ?? opts?.vars?.name,
      edits: opts?.edits,
    });
  scanCondaEnvironment('environment.yml', src, finding);
  return found;
}

/** The text with every finding's edits applied (from the end, as the fixes are). */
function fixed(src: string, found: Found[]): string {
  const edits = found.flatMap((f) => f.edits ?? []).sort((a, b) => b.start - a.start);
  let out = src;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

describe('conda environment files', () => {
  it('is told apart from other YAML: a top-level dependencies list with channels or a pip list', () => {
    expect(
      isCondaEnvironment('environment.yml', 'channels:\n  - nvidia\ndependencies:\n  - x\n'),
    ).toBe(true);
    expect(isCondaEnvironment('env.yaml', 'dependencies:\n  - pip:\n      - x\n')).toBe(true);
    // a CI workflow or a config that happens to name its dependencies
    expect(isCondaEnvironment('ci.yml', 'jobs:\n  build:\n    dependencies:\n      - lint\n')).toBe(
      false,
    );
    expect(isCondaEnvironment('deps.yml', 'dependencies:\n  - a\n')).toBe(false);
    expect(isCondaEnvironment('environment.txt', 'channels:\ndependencies:\n')).toBe(false);
  });

  it('CRLF line ends: whole lines go with their \\r\\n, the pip list keeps its indentation', () => {
    const src = [
      'channels:',
      '  - nvidia',
      '  - conda-forge',
      'dependencies:',
      '  - pytorch==2.1.0',
      '  - cudatoolkit=11.8',
      '  - pip:',
      '    - -r requirements.txt',
      '    - --extra-index-url https://download.pytorch.org/whl/cu118',
      '    - flash-attn',
      '',
    ].join('\r\n');
    const found = scan(src);
    expect(found.map((f) => `${f.line}:${f.ruleId}`)).toEqual([
      '2:req.cuda-wheel',
      '6:req.cuda-wheel',
      '9:req.cuda-wheel',
      '10:lib.flash-attn',
      '5:req.torch-npu',
    ]);
    // an entry of the pip list is placed where its name starts, past `- `
    expect(found.find((f) => f.ruleId === 'lib.flash-attn')?.column).toBe(7);
    expect(fixed(src, found)).toMatch(
      /^channels:\r\n {2}- conda-forge\r\ndependencies:\r\n {2}- pytorch==2\.1\.0\r\n {2}- pip:\r\n {4}- torch-npu==2\.1\.0\.post\d+\r\n {4}- -r requirements\.txt\r\n {4}- --extra-index-url https:\/\/download\.pytorch\.org\/whl\/cpu\r\n {4}- flash-attn\r\n$/,
    );
  });

  it('without a pip list the torch pin is told, with no edit (torch_npu comes from PyPI only)', () => {
    const found = scan(
      'channels:\n  - pytorch\ndependencies:\n  - pytorch=2.1.0 # pinned\n  - numpy\n',
    );
    expect(found).toEqual([
      { ruleId: 'req.torch-npu', line: 4, column: 5, text: 'pytorch=2.1.0', edits: undefined },
    ]);
    // torch_npu already listed: nothing to add
    expect(
      scan('dependencies:\n  - pytorch=2.1.0\n  - pip:\n    - torch-npu==2.1.0.post8\n'),
    ).toEqual([]);
  });

  it('malformed or hostile text: read line by line, never thrown on, nothing found that is not there', () => {
    for (const src of [
      '',
      'dependencies:',
      'dependencies:\n\t- pytorch-cuda\n',
      'dependencies:\n  -\n  - \n  - pip:\n  - pip:\n',
      'dependencies:\n  - "unterminated\n  - [a, b\n  - {x: 1\n',
      `dependencies:\n${'  - x\n'.repeat(20_000)}`,
      'dependencies:\n  - pip:\n      - nvidia-cudnn-cu12\u0000\n',
    ])
      expect(() => scan(src)).not.toThrow();
    expect(scan('dependencies:\n  - "unterminated\n  - [a, b\n')).toEqual([]);
    // a tab-indented entry is still an entry: the CUDA pin is told
    expect(scan('dependencies:\n\t- pytorch-cuda=12.1\n').map((f) => f.ruleId)).toEqual([
      'req.cuda-wheel',
    ]);
  });
});

describe('packaging metadata', () => {
  it('a hostile install_requires line (unclosed extras, repeated) is read once, nothing invented', () => {
    const found: string[] = [];
    const add: AddFinding = (ruleId) => found.push(ruleId);
    // each unclosed `[` was read to the line's end: 200 kB took 7 s
    scanPackageDependencies('setup.py', `install_requires=[${'"a[ '.repeat(50_000)}]`, add);
    scanPackageDependencies('setup.py', `install_requires=[${'"xformers[ '.repeat(50_000)}]`, add);
    expect(found).toEqual([]);
    scanPackageDependencies('setup.py', 'install_requires=["flash-attn[cuda]>=2", "numpy"]', add);
    expect(found).toEqual(['lib.flash-attn']);
  });
});
