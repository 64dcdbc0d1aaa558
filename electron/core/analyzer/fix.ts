import { createTwoFilesPatch } from 'diff';
import type { Parser } from 'web-tree-sitter';
import type { Edit, Finding } from './analyze-file';
import { loadRules } from './rules';
import type { ScanResult } from './scan';

export type FixMode = 'rewrite' | 'transfer';

/** Applies non-overlapping edits (later ones first, so offsets stay valid); overlaps keep the first. */
export function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  const kept: Edit[] = [];
  for (const e of sorted) {
    const last = kept.at(-1);
    if (last && e.start < last.end) continue;
    if (last && e.start === last.start && e.end === last.end && e.text === last.text) continue;
    kept.push(e);
  }
  let out = text;
  for (const e of kept.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

const TRANSFER_LINES = 'import torch_npu\nfrom torch_npu.contrib import transfer_to_npu';

/**
 * The migrated text of every file with findings. `rewrite` applies every concrete fix, as a
 * careful porter would write torch.npu code; `transfer` adds transfer_to_npu at the entry points
 * and leaves what it patches at run time (device strings, .cuda(), torch.cuda.*, nccl) alone.
 */
export function migratedFiles(
  scan: ScanResult,
  mode: FixMode,
  parser: Parser,
): Map<string, { before: string; after: string; parses: boolean }> {
  const byFile = new Map<string, Finding[]>();
  for (const f of scan.findings) byFile.set(f.file, [...(byFile.get(f.file) ?? []), f]);
  const out = new Map<string, { before: string; after: string; parses: boolean }>();
  const covered = new Set(
    loadRules()
      .filter((r) => r.transfer)
      .map((r) => r.id),
  );
  for (const [file, findings] of byFile) {
    const src = scan.sources.get(file);
    if (!src) continue;
    let edits: Edit[];
    if (mode === 'rewrite') edits = findings.flatMap((f) => f.fix?.edits ?? []);
    else {
      edits = [];
      // the compile mode needs torch_npu imported above it, so it follows the transfer lines
      const compile = findings.find((f) => f.ruleId === 'add.compile-mode');
      if (src.kind === 'python' && src.entryPoint && src.importsTorch) {
        const m = /^([ \t]*)import torch\b.*$/m.exec(src.text);
        if (m && !src.text.includes('transfer_to_npu')) {
          const at = m.index + m[0].length;
          const compileLines = (compile?.fix?.edits ?? []).map((e) => e.text.trim());
          const lines = [...TRANSFER_LINES.split('\n'), ...compileLines];
          edits.push({ start: at, end: at, text: `\n${lines.map((l) => m[1] + l).join('\n')}` });
        }
      }
      // what transfer_to_npu does not patch at run time still needs its fix
      edits.push(
        ...findings
          .filter((f) => f !== compile && f.ruleId !== 'add.import-torch-npu')
          .filter((f) => !covered.has(f.ruleId))
          .flatMap((f) => f.fix?.edits ?? []),
      );
    }
    if (!edits.length) continue;
    let after = applyEdits(src.text, edits);
    let parses = true;
    if (src.kind === 'python') {
      ({ text: after, parses } = withEmptyBlocksFilled(after, parser));
    }
    out.set(file, { before: src.text, after, parses });
  }
  return out;
}

type SyntaxNode = NonNullable<ReturnType<Parser['parse']>>['rootNode'];

/** The `:` ending each block header whose body holds no statement (comments alone do not count). */
function emptyBlockHeaders(root: SyntaxNode): SyntaxNode[] {
  const colons: SyntaxNode[] = [];
  for (const block of root.descendantsOfType('block')) {
    if (!block || block.namedChildren.some((c) => c && c.type !== 'comment')) continue;
    const colon = block.previousSibling;
    if (colon?.type === ':') colons.push(colon);
  }
  return colons;
}

/** The indentation of the line `at` is on, up to `at`. */
const lineIndent = (text: string, at: number): string =>
  /^[ \t]*/.exec(text.slice(text.lastIndexOf('\n', at - 1) + 1, at))![0];

/** The file's own indent step: what its first block with a statement adds to its header's. */
function indentUnit(root: SyntaxNode, text: string): string {
  for (const block of root.descendantsOfType('block')) {
    const first = block?.namedChildren.find((c) => c && c.type !== 'comment');
    if (!first || !block?.parent) continue;
    const inner = lineIndent(text, first.startIndex);
    const outer = lineIndent(text, block.parent.startIndex);
    if (inner.startsWith(outer) && inner.length > outer.length) return inner.slice(outer.length);
  }
  // no block left with a statement in it: the first indented line says how deep a level is
  return /^([ \t]+)\S/m.exec(text)?.[1] ?? '    ';
}

/**
 * Removals can take every statement out of a block (a CUDA-only branch whose body was one
 * monkey patch): Python rejects the empty suite, so each one gets a `pass`, indented one level
 * below its header. tree-sitter accepts empty blocks, so they are looked for here, and a text
 * parses only when its tree has no error and no empty block left.
 */
export function withEmptyBlocksFilled(
  text: string,
  parser: Parser,
): { text: string; parses: boolean } {
  let tree = parser.parse(text);
  if (!tree) return { text, parses: false };
  const holes = emptyBlockHeaders(tree.rootNode);
  if (holes.length) {
    const unit = indentUnit(tree.rootNode, text);
    const inserts = holes.map((colon) => {
      const indent = lineIndent(text, colon.parent?.startIndex ?? colon.startIndex);
      const eol = text.indexOf('\n', colon.endIndex);
      const at = eol < 0 ? text.length : eol;
      return { start: at, end: at, text: `\n${indent}${unit}pass` };
    });
    tree.delete();
    text = applyEdits(text, inserts);
    tree = parser.parse(text);
    if (!tree) return { text, parses: false };
  }
  const parses = !tree.rootNode.hasError && emptyBlockHeaders(tree.rootNode).length === 0;
  tree.delete();
  return { text, parses };
}

/** One unified patch for all changed files, `git apply`-able from the scanned root. */
export function unifiedPatch(files: Map<string, { before: string; after: string }>): string {
  return [...files.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, { before, after }]) =>
      createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after, '', '', { context: 3 }).replace(
        /^=+\n/,
        '',
      ),
    )
    .join('');
}
