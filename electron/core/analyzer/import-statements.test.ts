// Import statements read from their text (import-statements.ts) must say exactly what the tree
// says: checked on every import statement of the real samples here and of the real ports in the
// reference corpus, and on the ways an import can be written that the text reader leaves to the
// tree (comments and continuations inside, non-ASCII names, CRLF inside parentheses).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Node, Parser } from 'web-tree-sitter';
import { beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE } from '../../../tests/support/reference';
import { readImport, readImportText, readImportTree } from './import-statements';
import { pythonParser } from './python-parser';

const FIXTURES = join(__dirname, '../../../tests/fixtures/code');
const CORPUS = join(REFERENCE, 'corpus-dev/files');

function pythonFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...pythonFiles(p));
    else if (e.name.endsWith('.py')) out.push(p);
  }
  return out;
}

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
  }));
  tree.delete();
  return out;
}

describe('import statements read from text', () => {
  it('reads every import of the samples and real ports as the tree does', () => {
    const files = [...pythonFiles(FIXTURES), ...(existsSync(CORPUS) ? pythonFiles(CORPUS) : [])];
    let byText = 0;
    let all = 0;
    for (const f of files)
      for (const s of compare(readFileSync(f, 'utf8'))) {
        expect(s.read, `${f}: ${s.text}`).toEqual(s.tree);
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
