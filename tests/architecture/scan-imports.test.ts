import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// issue 19: a one-shot `amw scan` runs every module its static imports reach. The whole
// contract (shared/api/index.ts: every method's schemas) and the stages (shared/stages/index.ts:
// every stage's input, report and API schemas) were a tenth of an empty scan's instructions,
// and the scan uses none of them: it dispatches with the one spec it calls (local-core.ts) and
// takes the stages' texts from shared/stages/namespaces.ts.
const ROOT = join(__dirname, '../..');
const HEAVY = ['shared/api/index.ts', 'shared/stages/index.ts'];

/** Relative modules a file's value imports and re-exports name (`import type` loads nothing). */
function valueImports(file: string): string[] {
  const src = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  const re = /^(?:import|export)\s+(type\s+)?(?:[^;'"]*?\s+from\s+)?'([^']+)'/gm;
  for (const m of src.matchAll(re)) if (!m[1] && m[2]!.startsWith('.')) out.push(m[2]!);
  return out.map((spec) => {
    const base = join(dirname(file), spec);
    const found = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), base].find((p) =>
      existsSync(join(ROOT, p)),
    );
    if (!found) throw new Error(`${file}: cannot resolve ${spec}`);
    return relative(ROOT, join(ROOT, found));
  });
}

/** Every module reached from the entries by static value imports. */
function reached(...entries: string[]): Set<string> {
  const seen = new Set<string>();
  const todo = [...entries];
  while (todo.length) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...valueImports(file));
  }
  return seen;
}

describe('a one-shot scan loads no schema it does not use', () => {
  it('reaches neither the contract nor the stages from the CLI entry and the scan command', () => {
    // program.ts imports each command only when it runs: `amw scan` imports the scan command
    const modules = reached('electron/cli/index.ts', 'electron/cli/commands/scan.ts');
    expect(modules.has('electron/core/analyzer/scan.ts')).toBe(true);
    expect(HEAVY.filter((m) => modules.has(m))).toEqual([]);
  });

  it('the walk would see them reached', () => {
    expect(reached('electron/core/api/registry.ts').has('shared/api/index.ts')).toBe(true);
    expect(reached('electron/cli/commands/stage-commands.ts').has('shared/stages/index.ts')).toBe(
      true,
    );
  });
});
