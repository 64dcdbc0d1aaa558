import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REFERENCE } from './reference';

/** The scanner's real sample files. */
export const CODE_FIXTURES = fileURLToPath(new URL('../fixtures/code', import.meta.url));
/** The development corpus's real ports (absent on a machine without the reference material). */
export const CORPUS_FILES = join(REFERENCE, 'corpus-dev/files');

/** Every `.py` file under `dir`, in listing order. */
export function pythonFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...pythonFiles(p));
    else if (e.name.endsWith('.py')) out.push(p);
  }
  return out;
}

/** The real Python samples: every fixture, then the corpus's files where it exists (up to `limit`). */
export function realPythonFiles(limit = Infinity): string[] {
  return [
    ...pythonFiles(CODE_FIXTURES),
    ...(existsSync(CORPUS_FILES) ? pythonFiles(CORPUS_FILES).slice(0, limit) : []),
  ];
}
