// `npm start`: the Electron app where its runtime exists; otherwise one line saying why, then serve
// mode with its URL. The Electron binary is fetched on first start (npm install never downloads it:
// its install script is denied in package.json so that installs work on offline machines).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, mkdirSync, cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const require = createRequire(import.meta.url);
const run = (cmd, args, opts = {}) =>
  spawnSync(cmd, args, { stdio: 'inherit', ...opts }).status === 0;

if (
  !existsSync('dist/cli.js') ||
  !existsSync('dist/renderer/index.html') ||
  !existsSync('dist/main.js')
) {
  if (!run(process.execPath, ['scripts/build.mjs'])) process.exit(2);
}

// Where the runtime's download host is unreachable the attempt takes a while; remember a failure
// for a day so the fallback to serve mode is instant (AMW_RETRY_ELECTRON=1 tries again).
const FAILED_MARK = join('.electron-native', 'download-failed');
const DAY_MS = 24 * 60 * 60 * 1000;

function electronBinary() {
  if (!process.env.AMW_RETRY_ELECTRON && existsSync(FAILED_MARK)) {
    const { at, reason } = JSON.parse(readFileSync(FAILED_MARK, 'utf8'));
    if (Date.now() - at < DAY_MS)
      return { error: `${reason}; set AMW_RETRY_ELECTRON=1 to try again` };
  }
  const dir = join(require.resolve('electron/package.json'), '..');
  const exe = () => {
    const pathFile = join(dir, 'path.txt');
    return existsSync(pathFile) ? join(dir, 'dist', readFileSync(pathFile, 'utf8').trim()) : null;
  };
  if (!exe() || !existsSync(exe())) {
    const r = spawnSync(process.execPath, [join(dir, 'install.js')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status !== 0) {
      const reason =
        (r.stderr || r.error?.message || 'download failed').split('\n').find((l) => l.trim()) ??
        'download failed';
      const error = `its download failed: ${reason.trim().slice(0, 120)}`;
      mkdirSync('.electron-native', { recursive: true });
      writeFileSync(FAILED_MARK, JSON.stringify({ at: Date.now(), reason: error }));
      return { error };
    }
  }
  return exe() && existsSync(exe()) ? { path: exe() } : { error: 'binary not found after install' };
}

/**
 * better-sqlite3 in node_modules is built for Node (the CLI and tests use it). Electron needs its
 * own build; keep it beside, in .electron-native/, and hand its path to the app.
 */
function electronSqliteBinding(electronVersion) {
  const out = join('.electron-native', `better_sqlite3-electron-${electronVersion}.node`);
  if (existsSync(out)) return out;
  const work = join(tmpdir(), `amw-bsq-${process.pid}`);
  cpSync(join(require.resolve('better-sqlite3/package.json'), '..'), work, { recursive: true });
  const ok = run(
    'npx',
    [
      '--yes',
      'node-gyp',
      'rebuild',
      '--release',
      '--runtime=electron',
      `--target=${electronVersion}`,
      '--dist-url=https://electronjs.org/headers',
    ],
    { cwd: work },
  );
  if (!ok) return null;
  mkdirSync('.electron-native', { recursive: true });
  cpSync(join(work, 'build', 'Release', 'better_sqlite3.node'), out);
  rmSync(work, { recursive: true, force: true });
  return out;
}

const electron = electronBinary();
if (electron.path) {
  const version = require('electron/package.json').version;
  const binding = electronSqliteBinding(version);
  if (binding) {
    const child = spawn(electron.path, ['dist/main.js'], {
      stdio: 'inherit',
      env: { ...process.env, AMW_SQLITE_BINDING: join(process.cwd(), binding) },
    });
    child.on('exit', (code) => process.exit(code ?? 0));
  } else {
    startServe('better-sqlite3 could not be rebuilt for Electron');
  }
} else {
  startServe(electron.error);
}

function startServe(reason) {
  console.log(`Electron runtime not available (${reason}); starting serve mode instead.`);
  const child = spawn(process.execPath, ['bin/amw.js', 'serve', ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.on('SIGINT', () => child.kill('SIGINT'));
  child.on('exit', (code) => process.exit(code ?? 0));
}
