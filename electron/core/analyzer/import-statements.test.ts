// Import statements read from their text (import-statements.ts) must say exactly what the tree
// says: checked on every import statement of the real samples here and of the real ports in the
// reference corpus, and on the ways an import can be written that the text reader leaves to the
// tree (comments and continuations inside, non-ASCII names, CRLF inside parentheses). Imports
// the analysis does not read from the tree are left out of the parse: the findings and where
// `import torch_npu` goes stay those of a whole parse.
import { readFileSync } from 'node:fs';
import type { Node, Parser } from 'web-tree-sitter';
import { beforeAll, describe, expect, it } from 'vitest';
import { realPythonFiles } from '../../../tests/support/python-samples';
import { analyzeSource } from './analyze-file';
import { readImport, readImportLine, readImportText, readImportTree } from './import-statements';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';

const IMPORTS = new Set(['import_statement', 'import_from_statement']);
function importNodes(node: Node, out: Node[] = []): Node[] {
  if (IMPORTS.has(node.type)) out.push(node);
  else for (const c of node.namedChildren) if (c) importNodes(c, out);
  return out;
}
const plain = (s: { from: boolean; module: unknown; names: unknown }) => ({
  from: s.from,
  module: s.module,
  names: s.names,
});

let parser: Parser;
beforeAll(async () => {
  parser = await pythonParser();
});

/** [statement text, what the text reader and the tree both read] for every import in `src`. */
function compare(src: string) {
  const tree = parser.parse(src)!;
  const out = importNodes(tree.rootNode).map((n) => ({
    text: src.slice(n.startIndex, n.endIndex),
    read: plain(readImport(src, n, n.type)),
    tree: plain(readImportTree(n, n.type)),
    byText: readImportText(src, n, n.type) !== null,
    // read from its line alone, with no tree (null where the line is not plain)
    line: (() => {
      const r = readImportLine(src, n.startIndex);
      return r && plain(r);
    })(),
  }));
  tree.delete();
  return out;
}

describe('import statements read from text', () => {
  it('reads every import of the samples and real ports as the tree does', () => {
    const files = realPythonFiles();
    let byText = 0;
    let all = 0;
    for (const f of files)
      for (const s of compare(readFileSync(f, 'utf8'))) {
        expect(s.read, `${f}: ${s.text}`).toEqual(s.tree);
        if (s.line) expect(s.line, `${f}: ${s.text}`).toEqual(s.tree);
        all++;
        if (s.byText) byText++;
      }
    // the text reader is the common path, not a rarity
    expect(all).toBeGreaterThan(50);
    expect(byText / all).toBeGreaterThan(0.9);
  });

  it('takes the plain forms from text and leaves the others to the tree, with equal results', () => {
    const cases: [string, boolean][] = [
      ['import os', true],
      ['import torch.distributed as dist, numpy as np  # tail', true],
      ['from . import _C', true],
      ['from ..ops import (nms as _nms,\n    roi_align,\n)', true],
      ['from torch.cuda.amp import *', true],
      ['from x import(a, b)', true],
      ['import  a.b\tas  c', true],
      ['from a import (b,  # why\n c)', false],
      ['from a import b, \\\n    c', false],
      ['import a . b', false],
      ['import módulo', false],
      ['from a import (b,\r\n c)', false],
      ['from.x import y', false],
      ['import a,', true],
    ];
    for (const [src, text] of cases) {
      const [s] = compare(`${src}\n`);
      expect(s, src).toBeDefined();
      expect(s!.read, src).toEqual(s!.tree);
      expect(s!.byText, src).toBe(text);
    }
    const [aliased] = compare('import torch.distributed as dist, numpy\n');
    expect(aliased!.read.names).toEqual([
      { name: 'torch.distributed', alias: 'dist', text: 'torch.distributed as dist' },
      { name: 'numpy', alias: null, text: 'numpy' },
    ]);
  });
});

/** Enough plain code after a snippet that the file is parsed in parts (files < 2 KB are whole). */
const FILLER = Array.from(
  { length: 30 },
  (_, i) => `

def helper_${i}(values, scale=1.0):
    total = 0.0
    for v in values:
        total += v * scale
    return total
`,
).join('');

describe('imports left out of the parse', () => {
  const both = (src: string, file = 'x.py') => {
    const rules = loadRules();
    const pick = (r: ReturnType<typeof analyzeSource>) => ({
      importEnd: r.importEnd,
      importsTorch: r.importsTorch,
      findings: r.findings.map((f) => `${f.line}:${f.column}-${f.endLine}:${f.ruleId}`),
    });
    return {
      narrowed: pick(analyzeSource(parser, src, file, rules, 'en')),
      whole: pick(analyzeSource(parser, src, file, rules, 'en', true)),
    };
  };

  it('end the leading import block where a whole parse ends it, on every sample and port', () => {
    const files = realPythonFiles();
    for (const f of files) {
      const { narrowed, whole } = both(readFileSync(f, 'utf8'), f);
      expect(narrowed, f).toEqual(whole);
    }
  });

  it('whatever statement ends the block', () => {
    const head = [
      '"""A training script."""',
      // parsed (a rule reports it), then a run of imports left out
      'from apex import amp',
      'import os',
      'import sys',
      'from typing import Optional',
      'import torch',
      'from .utils import load_config',
    ];
    const enders = [
      'LOG_EVERY = 10',
      'try:\n    import wandb\nexcept ImportError:\n    wandb = None\nimport json',
      'if sys.version_info < (3, 8):\n    raise SystemExit("needs 3.8")\nimport json',
      '"""Not a docstring any more."""\nimport json',
      '@torch.no_grad()\ndef infer(x):\n    return x.cuda()',
      'def main():\n    pass',
    ];
    for (const ender of enders) {
      const src = `${head.join('\n')}\n${ender}\n${FILLER}\nx = torch.zeros(1).cuda()\n`;
      const { narrowed, whole } = both(src);
      expect(narrowed, ender).toEqual(whole);
      expect(whole.importEnd, ender).toBeGreaterThan(src.indexOf('load_config'));
    }
  });

  it('however the block is written', () => {
    const heads = [
      // another statement after a `;`: the line is parsed
      'import os\nimport matplotlib; matplotlib.use("Agg")\nimport sys\nimport torch',
      // a string with an upper-case prefix between imports
      'import os\nR"""Raw notes."""\nimport sys\nimport torch',
      // an import continuing an `if` line: under the if, so optional
      'import torch\nif is_apex_available(): \\\nimport apex\nimport sys',
      // a lone carriage return ends a line for the searches only
      'import os\rimport sys\nimport torch',
    ];
    for (const head of heads) {
      const src = `${head}\nfrom apex import amp\n${FILLER}\nx = torch.zeros(1).cuda()\n`;
      const { narrowed, whole } = both(src);
      expect(narrowed, head).toEqual(whole);
    }
  });

  it('the same text read with other rules reads as it would alone', () => {
    const src = `import os\nfrom torch.cuda.amp import autocast\nimport torch\n${FILLER}\nx = torch.zeros(1).cuda()\n`;
    const all = loadRules();
    const some = all.filter((r) => r.match.kind !== 'reference');
    analyzeSource(parser, src, 'x.py', some, 'en');
    const after = analyzeSource(parser, src, 'x.py', all, 'en');
    analyzeSource(parser, 'pass\n', 'y.py', all, 'en');
    const alone = analyzeSource(parser, src, 'x.py', all, 'en');
    expect(after.findings).toEqual(alone.findings);
    expect(after.findings.some((f) => f.line === 2)).toBe(true);
  });
});
