import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exitOf, spawnAmw } from '../../tests/support/cli';
import { tempDir } from '../../tests/support/temp';
import { appRoot } from '../core/paths';

// The built `bin/amw.js` runs one-shot commands from V8's code cache (bin/code-cache.js). A user
// sees only that the output never depends on the cache: none, a good one, a damaged one or a
// folder that cannot be written. These spawn the real binary: `node scripts/build.mjs` first.
const NANOGPT = join(__dirname, '../../tests/fixtures/code/nanogpt-ddp');

const scan = (cacheDir: string) =>
  exitOf(spawnAmw(['scan', NANOGPT, '--json'], { AMW_CACHE_DIR: cacheDir }));
const cacheFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.v8cache'));

describe('one-shot commands and the code cache', () => {
  it('prints the same scan without a cache, writing one, and reading it', async () => {
    const dir = tempDir('amw-code-cache-');
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
    const dir = tempDir('amw-code-cache-');
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

  it('runs a command that loads a module when it runs the same from the cache', async () => {
    // `precision import` loads node:path when it runs; a function restored from V8's code cache
    // once failed there ("A dynamic import callback was not specified"), the uncached run warned
    const dir = tempDir('amw-code-cache-');
    const env = { AMW_CACHE_DIR: dir, AMW_HOME: join(dir, 'home') };
    const missing = join(dir, 'no-such-dump');
    const runs = [];
    for (let i = 0; i < 2; i++)
      runs.push(await exitOf(spawnAmw(['precision', 'import', missing], env)));
    expect(cacheFiles(dir)).toHaveLength(1);
    for (const r of runs) expect(r.stderr).toBe(`amw: Not found: ${missing} does not exist.\n`);
  }, 120_000);

  it('runs a stamped bundle changed after its build as it now is, not from the old cache', async () => {
    // the build stamps dist/cli.cjs with its hash (scripts/build.mjs), and the cache is keyed by
    // the stamp instead of hashing the bundle; V8 itself only checks the source's length
    const dir = tempDir('amw-code-cache-');
    const bundle = join(dir, 'bundle.cjs');
    const built = readFileSync(join(appRoot(), 'dist', 'cli.cjs'), 'latin1');
    expect(built).toMatch(/^\/\*amw-build:[0-9a-f]{24}\*\//);
    let stamp = '/*amw-build:0123456789abcdef01234567*/';
    const run = async (word: string, mtime: number) => {
      writeFileSync(
        bundle,
        `${stamp}\nfunction say() { process.stdout.write('${word}'); }\nsay();\n`,
      );
      utimesSync(bundle, mtime, mtime);
      const loader = pathToFileURL(join(appRoot(), 'bin', 'code-cache.js')).href;
      const script = `import(${JSON.stringify(loader)}).then((m) => m.runWithCodeCache(${JSON.stringify(bundle)}, 'say', ${JSON.stringify(dir)}))`;
      return exitOf(spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }));
    };
    expect((await run('before', 1_700_000_000)).stdout).toBe('before');
    expect((await run('before', 1_700_000_000)).stdout).toBe('before');
    expect(cacheFiles(dir)).toHaveLength(1);
    // same length, same stamp: only the file's time says it changed
    const after = await run('after!', 1_700_000_100);
    expect(after).toMatchObject({ code: 0, stdout: 'after!', stderr: '' });
    // a bundle without a stamp is hashed: it runs, and has a cache of its own
    stamp = '/* no stamp here, of the same length */';
    expect((await run('hashed', 1_700_000_100)).stdout).toBe('hashed');
    expect((await run('hashed', 1_700_000_100)).stdout).toBe('hashed');
    expect(cacheFiles(dir)).toEqual([
      expect.stringMatching(
        new RegExp(`^cli-${process.version}-${process.arch}-[0-9a-f]{24}-say\\.v8cache$`),
      ),
    ]);
  }, 120_000);

  it('works, and says nothing, where the cache folder cannot be made', async () => {
    const dir = tempDir('amw-code-cache-');
    writeFileSync(join(dir, 'a-file'), '');
    const baseline = await scan('');
    const r = await scan(join(dir, 'a-file', 'cache'));
    expect(r.code).toBe(baseline.code);
    expect(r.stdout).toBe(baseline.stdout);
    expect(r.stderr).toBe(baseline.stderr);
  }, 120_000);
});

describe('the one-shot CLI (one CommonJS file) and serve’s (ES modules) are one program', () => {
  // bin/amw.js runs every command but serve from dist/cli.cjs; the same sources are also built as
  // dist/cli.js. A package that ships both module kinds can differ between them (ssh-config's
  // default export did: imported hosts lost their HostName), so both must print the same.
  const esm = (args: string[], env: NodeJS.ProcessEnv) =>
    exitOf(
      spawn(process.execPath, [join(appRoot(), 'dist', 'cli.js'), ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'en_US.UTF-8', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );

  it('prints the same help, hosts imported from ssh_config, scans and parses', async () => {
    const dir = tempDir('amw-bundles-');
    const config = join(dir, 'ssh_config');
    writeFileSync(
      config,
      'Host npu-a npu-b\n  User hw\nHost npu-a\n  HostName 10.8.0.1\n  Port 2222\n',
    );
    const npuSmi = join(__dirname, '../../tests/fixtures/npu-smi/info-s11.txt');
    const commands = [
      ['--help'],
      ['--lang', 'zh-CN', 'scan', '--help'],
      ['hosts', 'import-ssh-config', config],
      ['hosts', 'list', '--json'],
      ['scan', NANOGPT, '--json'],
      ['parse', 'npu-smi', npuSmi],
      ['no-such-command'],
    ];
    // each side imports into a home of its own; listings are compared without their timestamps
    const cjsHome = join(dir, 'cjs');
    const esmHome = join(dir, 'esm');
    for (const args of commands) {
      const a = await exitOf(spawnAmw(args, { AMW_HOME: cjsHome, AMW_CACHE_DIR: '' }));
      const b = await esm(args, { AMW_HOME: esmHome });
      const same = (s: string) => s.replaceAll(cjsHome, 'HOME').replaceAll(esmHome, 'HOME');
      const stamps = (s: string) => same(s).replace(/"(createdAt|updatedAt)": "[^"]+"/g, '');
      expect({ args, code: a.code, out: stamps(a.stdout), err: same(a.stderr) }).toEqual({
        args,
        code: b.code,
        out: stamps(b.stdout),
        err: same(b.stderr),
      });
    }
    const hosts = JSON.parse(
      (await exitOf(spawnAmw(['hosts', 'list', '--json'], { AMW_HOME: cjsHome }))).stdout,
    ) as {
      name: string;
      hostname: string;
      port: number;
      username: string | null;
    }[];
    expect(hosts.find((h) => h.name === 'npu-a')).toMatchObject({
      hostname: '10.8.0.1',
      port: 2222,
      username: 'hw',
    });
  }, 180_000);

  it('finds the same in text the parser reads in many chunks: non-ASCII, long lines, CRLF', async () => {
    // the one-shot bundle copies the parser's input its own way (scripts/tree-sitter-glue.mjs): a
    // kept statement longer than one 10 KB chunk, two-byte text and CRLF line ends must read as
    // web-tree-sitter's own copy reads them
    const dir = tempDir('amw-chunks-');
    const filler = Array.from(
      { length: 40 },
      (_, i) => `def helper_${i}(x):\n    """说明 ${i}: ünïcödé"""\n    return x * ${i}\n\n`,
    ).join('');
    const long = `    label = "${'中文'.repeat(3000)}" + str(torch.zeros(1).cuda())\n`;
    const src = `import torch\n\n${filler}def train(model):\n${long}    model.cuda()\n    torch.cuda.synchronize()\n`;
    writeFileSync(join(dir, 'train.py'), src);
    writeFileSync(join(dir, 'train_crlf.py'), src.replaceAll('\n', '\r\n'));
    const a = await exitOf(spawnAmw(['scan', dir, '--json'], { AMW_CACHE_DIR: '' }));
    const b = await esm(['scan', dir, '--json'], {});
    expect(a.stdout).toBe(b.stdout);
    const found = (JSON.parse(a.stdout) as { findings: { file: string; line: number }[] }).findings;
    // the line after the 6000-character one, in both files
    const line = src.split('\n').findIndex((l) => l === '    model.cuda()') + 1;
    for (const file of ['train.py', 'train_crlf.py'])
      expect(found.some((f) => f.file === file && f.line === line)).toBe(true);
  }, 60_000);
});
