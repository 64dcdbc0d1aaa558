import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// A session header once used the browser's date format while the timeline used the chosen UI
// language's: every date and number in the renderer goes through renderer/src/format.ts.
const ROOT = 'renderer/src';
const FORMATTER = 'renderer/src/format.ts';
const OWN_FORMAT =
  /\.toLocale(String|DateString|TimeString)\(|new Intl\.(DateTimeFormat|NumberFormat)\(/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the renderer formats dates and numbers in one place', () => {
  it('no view formats by the browser locale or with a format of its own', () => {
    const offenders = sources(ROOT)
      .map((p) => relative('.', p))
      .filter((p) => p !== FORMATTER && OWN_FORMAT.test(readFileSync(p, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
