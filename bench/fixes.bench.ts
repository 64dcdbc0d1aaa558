// Whether the proposed fixes are ready to apply: `amw scan --fix` in both modes over the
// development corpus and every bench/probe*, each migrated Python file read back by Python's
// own parser (a file that parsed before must still parse) and, where pyflakes is installed, for
// names the migration leaves undefined (`torch_npu` used above its import). Prints the figures.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname ?? '.', '../..');
const corpus = process.env.AMW_CORPUS_DEV ?? resolve(root, '..', 'shared', 'corpus-dev');
const amw = join(root, 'bin', 'amw.js');
const tmp = mkdtempSync(join(tmpdir(), 'amw-bench-fixes-'));

const trees: [string, string][] = [];
if (existsSync(join(corpus, 'files'))) trees.push(['corpus-dev', join(corpus, 'files')]);
for (const name of readdirSync(join(root, 'bench')).sort((a, b) =>
  a.localeCompare(b, 'en', { numeric: true }),
))
  if (/^probe\d*$/.test(name) && existsSync(join(root, 'bench', name, 'manifest.json')))
    trees.push([name, join(root, 'bench', name, 'files')]);

for (const mode of ['rewrite', 'transfer'] as const) {
  const total = { trees: 0, changed: 0, broken: 0, undefined: 0 as number | null };
  const examples: string[] = [];
  for (const [name, dir] of trees) {
    const out = join(tmp, `${name}-${mode}`);
    const fix = spawnSync(
      process.execPath,
      [amw, 'scan', dir, '--fix', '--out', out, '--mode', mode],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
      },
    );
    // exit 1 means errors were found (the scan's contract), not that it failed
    if (fix.status !== 0 && fix.status !== 1) throw new Error(`${name}: ${fix.stderr.slice(-500)}`);
    const check = spawnSync('python3', [join(root, 'bench', 'fix_check.py'), dir, out], {
      encoding: 'utf8',
    });
    if (check.status !== 0) throw new Error(`fix_check.py on ${name}: ${check.stderr.slice(-500)}`);
    const r = JSON.parse(check.stdout) as {
      changed: number;
      broken: number;
      undefined: number | null;
      examples: string[];
    };
    total.trees++;
    total.changed += r.changed;
    total.broken += r.broken;
    total.undefined =
      r.undefined === null || total.undefined === null ? null : total.undefined + r.undefined;
    examples.push(...r.examples.map((e) => `${name}/${e}`));
    rmSync(out, { recursive: true, force: true });
  }
  console.log(
    `${mode}: ${total.trees} trees, ${total.changed} Python files changed, ${total.broken} no longer parse, ` +
      `${total.undefined === null ? 'undefined names not checked (no pyflakes)' : `${total.undefined} names left undefined`}`,
  );
  for (const e of examples.slice(0, 10)) console.log(`  ${e}`);
}
rmSync(tmp, { recursive: true, force: true });
