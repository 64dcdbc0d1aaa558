import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { en } from '../../shared/i18n/en';
import { STAGE_NAMESPACES } from '../../shared/stages';

// A key written out in code (`t('hosts.add.update')`) that no dictionary has shows on screen as
// the key itself: the edit-host dialog once read `hosts.add.editTitle`. Keys built at run time
// (template literals, variables) are checked where they are made; these are the literal ones.
const ROOTS = ['renderer/src', 'electron/cli', 'electron/core'];
const LITERAL_KEY = /\bt\(\s*'([A-Za-z][\w-]*(?::[\w-]+)?(?:\.[\w-]+)+|[\w-]+:[\w.-]+)'/g;

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) out.push(p);
  }
  return out;
}

function has(tree: unknown, path: string[]): boolean {
  let node = tree;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'string';
}

/** A key as i18next finds it: in the app's strings or a stage's namespace, plural forms too. */
function known(key: string): boolean {
  const [ns, rest] = key.includes(':') ? key.split(':', 2) : [null, key];
  const tree = ns ? STAGE_NAMESPACES[ns as keyof typeof STAGE_NAMESPACES]?.en : en;
  if (!tree) return false;
  const path = rest!.split('.');
  const last = path.pop()!;
  return ['', '_one', '_other'].some((suffix) => has(tree, [...path, last + suffix]));
}

describe('i18n keys written in code', () => {
  it('every literal key the UI, the CLI and the engine ask for is in the English dictionary', () => {
    const missing: string[] = [];
    let seen = 0;
    for (const root of ROOTS)
      for (const file of sources(root))
        for (const m of readFileSync(file, 'utf8').matchAll(LITERAL_KEY)) {
          seen++;
          if (!known(m[1]!)) missing.push(`${file}: ${m[1]}`);
        }
    expect(seen).toBeGreaterThan(300);
    expect(missing).toEqual([]);
  });
});
