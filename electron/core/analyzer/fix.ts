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
      if (src.kind === 'python' && src.entryPoint && src.importsTorch) {
        const m = /^([ \t]*)import torch\b.*$/m.exec(src.text);
        if (m && !src.text.includes('transfer_to_npu')) {
          const at = m.index + m[0].length;
          edits.push({
            start: at,
            end: at,
            text: `\n${TRANSFER_LINES.split('\n')
              .map((l) => m[1] + l)
              .join('\n')}`,
          });
        }
      }
      // what transfer_to_npu does not patch at run time still needs its fix
      edits.push(
        ...findings
          .filter((f) => f.ruleId !== 'add.import-torch-npu' && !covered.has(f.ruleId))
          .flatMap((f) => f.fix?.edits ?? []),
      );
    }
    if (!edits.length) continue;
    const after = applyEdits(src.text, edits);
    let parses = true;
    if (src.kind === 'python') {
      const tree = parser.parse(after);
      parses = !!tree && !tree.rootNode.hasError;
      tree?.delete();
    }
    out.set(file, { before: src.text, after, parses });
  }
  return out;
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
