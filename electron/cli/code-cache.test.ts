import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitOf, spawnAmw } from '../../tests/support/cli';

// The built `bin/amw.js` runs one-shot commands from V8's code cache (bin/code-cache.js). A user
// sees only that the output never depends on the cache: none, a good one, a damaged one or a
// folder that cannot be written. These spawn the real binary: `node scripts/build.mjs` first.
const NANOGPT = join(__dirname, '../../tests/fixtures/code/nanogpt-ddp');

const scan = (cacheDir: string) =>
  exitOf(spawnAmw(['scan', NANOGPT, '--json'], { AMW_CACHE_DIR: cacheDir }));
const cacheFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.v8cache'));

describe('one-shot commands and the code cache', () => {
  it('prints the same scan without a cache, writing one, and reading it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-code-cache-'));
    const uncached = await scan('');
    expect(uncached.stdout).toContain('"findings"');
    const writing = await scan(dir);
    const [file] = cacheFiles(dir);
    expect(file).toMatch(
      new RegExp(`^cli-${process.version}-${process.arch}-[0-9a-f]+-scan\\.v8cache$`),
    );
    const written = statSync(join(dir, file!)).mtimeMs;
    const reading = await scan(dir);
    for (const r of [writing, reading]) {
      expect(r.code).toBe(uncached.code);
      expect(r.stdout).toBe(uncached.stdout);
      expect(r.stderr).toBe(uncached.stderr);
    }
    // a cache that fits is read, not written again
    expect(statSync(join(dir, file!)).mtimeMs).toBe(written);
  }, 120_000);

  it('ignores a damaged cache, replaces it, and drops an older build’s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-code-cache-'));
    const good = await scan(dir);
    const [file] = cacheFiles(dir);
    writeFileSync(join(dir, file!), 'not V8 code cache data');
    const older = `cli-${process.version}-${process.arch}-000000000000000000000000-scan.v8cache`;
    writeFileSync(join(dir, older), 'an earlier build');
    // another command's cache of this build is its own, and stays
    const version = await exitOf(spawnAmw(['--version'], { AMW_CACHE_DIR: dir }));
    expect(version.code).toBe(0);
    const damaged = await scan(dir);
    expect(damaged.code).toBe(good.code);
    expect(damaged.stdout).toBe(good.stdout);
    expect(damaged.stderr).toBe(good.stderr);
    expect(cacheFiles(dir).sort()).toEqual([file!.replace(/-scan\./, '-other.'), file].sort());
    expect(readFileSync(join(dir, file!), 'utf8')).not.toBe('not V8 code cache data');
  }, 120_000);

  it('works, and says nothing, where the cache folder cannot be made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-code-cache-'));
    writeFileSync(join(dir, 'a-file'), '');
    const baseline = await scan('');
    const r = await scan(join(dir, 'a-file', 'cache'));
    expect(r.code).toBe(baseline.code);
    expect(r.stdout).toBe(baseline.stdout);
    expect(r.stderr).toBe(baseline.stderr);
  }, 120_000);
});
