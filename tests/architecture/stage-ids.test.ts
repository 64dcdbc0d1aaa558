import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHARED_STAGES } from '../../shared/stages';

// issue 12: a stage lives in its own folders (shared/stages/<id>, electron/core/stages/<id>,
// renderer/src/stages/<id>) plus one registry line per side (and one for its messages, which the
// engine loads without the stages: shared/stages/namespaces.ts); nothing else names it.
const ROOTS = ['shared', 'electron', 'renderer/src'];
const REGISTRIES = new Set([
  'shared/stages/index.ts',
  'shared/stages/namespaces.ts',
  'electron/core/stages/registry.ts',
  'renderer/src/stages/registry.ts',
]);
/**
 * Names that are not the stage: `code` is also the code review — its page (`#/code`), its store
 * and its dictionary — which works outside any session; precision's `--ops` are aten ops to hook;
 * `distributed` and `profiling` are also categories of the scanner's findings; a profile comparison
 * has `ops` rows;
 * a launch script's `env` is the command that runs another one.
 */
const NOT_THE_STAGE: Record<string, string[]> = {
  'renderer/src/routes.ts': ['code'],
  'renderer/src/App.tsx': ['code'],
  'renderer/src/pages/code/CodePage.tsx': ['code'],
  'electron/core/stages/define.ts': ['code'],
  'shared/i18n/zh-CN/code.ts': ['code'],
  'electron/core/stages/precision/cli.ts': ['ops'],
  'electron/core/stages/profiling/report.ts': ['ops'],
  'electron/core/analyzer/python-file.ts': ['distributed'],
  'electron/core/analyzer/scan.ts': ['distributed'],
  'electron/core/analyzer/script-files.ts': ['env'],
  'shared/stages/code/api.ts': ['distributed', 'profiling'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.tsx?$/.test(name) && !/\.(test|spec)\./.test(name) ? [path] : [];
  });
}

/** Comments may mention a stage (they explain); only code counts. */
const code = (src: string) =>
  src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

describe('stage ids stay in their own folders', () => {
  const ids = SHARED_STAGES.map((s) => s.id);
  const own = (file: string, id: string) =>
    [`shared/stages/${id}/`, `electron/core/stages/${id}/`, `renderer/src/stages/${id}/`].some(
      (p) => file.startsWith(p),
    );

  it('no shared file of the engine, the contract, the CLI or the renderer names a stage', () => {
    const found: string[] = [];
    for (const file of ROOTS.flatMap(sources)) {
      if (REGISTRIES.has(file)) continue;
      const src = code(readFileSync(file, 'utf8'));
      for (const id of ids) {
        if (own(file, id) || NOT_THE_STAGE[file]?.includes(id)) continue;
        if (new RegExp(`['"\`]${id}['"\`]`).test(src)) found.push(`${file} names the stage ${id}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('the check would see a stage named outside its folders', () => {
    const id = ids[0]!;
    expect(new RegExp(`['"\`]${id}['"\`]`).test(code(`run({ stage: '${id}' })`))).toBe(true);
    expect(new RegExp(`['"\`]${id}['"\`]`).test(code(`// stage '${id}' explained`))).toBe(false);
  });
});
