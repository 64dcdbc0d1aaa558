import { build, type Plugin } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as original from 'web-tree-sitter';
import { appRoot } from '../../electron/core/paths';

// The one-shot CLI's bundle moves data in and out of WebAssembly memory its own way
// (scripts/tree-sitter-glue.mjs): the parser's input, and every node the analysis reads. Every
// tree it builds must be the tree web-tree-sitter builds, read the same way: the same nodes with
// the same parents, fields and descendants, for whole and ranged parses, two-byte text, lines
// longer than one input chunk, CRLF.
type TreeSitter = typeof original;
const require = createRequire(import.meta.url);

async function patched(): Promise<TreeSitter> {
  const { treeSitterGlue } = (await import(
    pathToFileURL(join(appRoot(), 'scripts', 'tree-sitter-glue.mjs')).href
  )) as { treeSitterGlue: () => Plugin };
  const dir = mkdtempSync(join(tmpdir(), 'amw-tree-sitter-glue-'));
  const outfile = join(dir, 'tree-sitter.cjs');
  try {
    await build({
      entryPoints: [require.resolve('web-tree-sitter')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile,
      plugins: [treeSitterGlue()],
      logLevel: 'silent',
    });
    return require(outfile) as TreeSitter;
  } finally {
    // loaded by now: the bundle is not read again
    rmSync(dir, { recursive: true, force: true });
  }
}

async function parserOf(ts: TreeSitter) {
  await ts.Parser.init({ locateFile: () => require.resolve('web-tree-sitter/tree-sitter.wasm') });
  const language = await ts.Language.load(
    require.resolve('tree-sitter-python/tree-sitter-python.wasm'),
  );
  const parser = new ts.Parser();
  parser.setLanguage(language);
  return parser;
}

/**
 * Every node, in order, through a cursor (its type and extent) and through the node API the
 * analysis uses: its parent, its name field, the descendant at its extent, its next sibling.
 */
function nodesOf(root: original.Node): string[] {
  const out: string[] = [];
  const cursor = root.walk();
  for (;;) {
    out.push(`${cursor.nodeType}@${cursor.startIndex}-${cursor.endIndex}`);
    if (cursor.gotoFirstChild() || cursor.gotoNextSibling()) continue;
    while (cursor.gotoParent()) if (cursor.gotoNextSibling()) break;
    if (cursor.nodeId === root.id) break;
  }
  const visit = (node: original.Node) => {
    const at = node.descendantForIndex(node.startIndex, node.endIndex);
    out.push(
      [
        node.type,
        node.startPosition.row,
        node.startPosition.column,
        node.parent?.startIndex,
        node.childForFieldName('name')?.text,
        at?.type,
        node.nextNamedSibling?.startIndex,
      ].join(' '),
    );
    for (const child of node.namedChildren) if (child) visit(child);
  };
  visit(root);
  return out;
}

const LONG = `total = ${Array.from({ length: 900 }, (_, i) => `值${i} + x${i}.cuda()`).join(' + ')}\n`;
const TEXTS = {
  ascii: 'import torch\n\ndef f(x):\n    return x.cuda()\n',
  'two-byte': `# 中文注释\n名字 = "ünïcödé 字符串"\ndef 训练(模型):\n    return 模型.to("cuda")\n`,
  'longer than a chunk': `import torch\n${LONG}def g():\n    pass\n`,
  crlf: `import torch\r\n${LONG.replace('\n', '\r\n')}x = 1\r\n`,
};

describe('the one-shot bundle’s tree-sitter glue', () => {
  it('builds the same trees as web-tree-sitter, whole and in ranges', async () => {
    const [mine, theirs] = [await parserOf(await patched()), await parserOf(original)];
    // a node has the same own properties, in the same order
    const keys = (p: original.Parser) => Object.keys(p.parse('x = 1\n')!.rootNode.firstChild!);
    expect(keys(mine)).toEqual(keys(theirs));
    for (const [name, text] of Object.entries(TEXTS)) {
      const whole = (p: original.Parser) => nodesOf(p.parse(text)!.rootNode);
      expect(whole(mine), name).toEqual(whole(theirs));
      // two ranges, as the scanner parses a file: its first line, and from the third on, read
      // through a callback that returns the text up to the end of the range it starts in
      const second = text.indexOf('\n') + 1;
      const third = text.indexOf('\n', second) + 1;
      const at = (i: number) => {
        const before = text.slice(0, i).split('\n');
        return { row: before.length - 1, column: before.at(-1)!.length };
      };
      const ranges = [
        { startIndex: 0, endIndex: second, startPosition: at(0), endPosition: at(second) },
        {
          startIndex: third,
          endIndex: text.length,
          startPosition: at(third),
          endPosition: at(text.length),
        },
      ];
      const read = (i: number) => text.slice(i, i < second ? second : text.length);
      const ranged = (p: original.Parser) =>
        nodesOf(p.parse(read, null, { includedRanges: ranges })!.rootNode);
      expect(ranged(mine), name).toEqual(ranged(theirs));
    }
  }, 60_000);
});
