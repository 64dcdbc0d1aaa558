// Runs a CommonJS bundle with V8's code cache: the bytecode V8 compiled for it in an earlier run,
// kept in the user's cache folder, so a one-shot command does not parse and compile the CLI again
// at every start (Node 20 has no compile cache of its own). The cache is only ever an optimisation:
// missing, stale (another bundle or Node), rejected by V8 or unwritable, the bundle runs as it is.
const { isAscii } = require('node:buffer');
const {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} = require('node:fs');
const { createRequire } = require('node:module');
const { homedir } = require('node:os');
const { dirname, join } = require('node:path');
const { constants, Script } = require('node:vm');

const PREFIX = 'cli-';
const BUILD_STAMP = /^\/\*amw-build:([0-9a-f]{24})\*\//;
const SUFFIX = '.v8cache';

/** Where the code cache lives: AMW_CACHE_DIR (empty: no cache), else the platform's cache folder. */
function codeCacheDir(env = process.env) {
  if (env.AMW_CACHE_DIR !== undefined) return env.AMW_CACHE_DIR || null;
  try {
    return platformCacheDir(env);
  } catch {
    // no home folder to be found (no HOME, no passwd entry): the command runs without a cache
    return null;
  }
}

function platformCacheDir(env) {
  if (process.platform === 'win32')
    return join(
      env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'),
      'Ascend Migration Workbench',
      'Cache',
    );
  if (process.platform === 'darwin')
    return join(homedir(), 'Library', 'Caches', 'Ascend Migration Workbench');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ascend-migration-workbench');
}

/**
 * Runs `file` (a CommonJS bundle) as Node's loader would, compiled from the cache when it fits.
 * A cache of each command's own (`scan`, `info`…): it holds what that command compiled.
 */
function runWithCodeCache(file, command, dir = codeCacheDir()) {
  const bytes = readFileSync(file);
  // the build keeps the bundle ASCII (scripts/build.mjs): then it reads as Latin-1, far faster
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  // keyed by the bundle's content and the Node that compiled it; V8 checks its own version and
  // flags again, and refuses data that is not its own
  const key = bundleKey(file, bytes);
  const which = /^[a-z][a-z-]{0,30}$/.test(command ?? '') ? command : 'other';
  const name = `${PREFIX}${process.version}-${process.arch}-${key}-${which}${SUFFIX}`;
  const cacheFile = dir ? join(dir, name) : null;
  let cachedData;
  try {
    if (cacheFile) cachedData = readFileSync(cacheFile);
  } catch {
    // none yet, or unreadable: compiled from source, and written at exit if it can be
  }
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) { ${source}\n})`,
    {
      filename: file,
      cachedData,
      // the bundle's import() of an external package goes to Node's own loader
      importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    },
  );
  if (cacheFile && (!cachedData || script.cachedDataRejected))
    // at exit, so the cache also holds the functions this run compiled lazily (most of them)
    process.once('exit', () => saveCache(script, dir, cacheFile, name));
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
}

/** The build's stamp (scripts/build.mjs), then the file's size and time; else its hash. */
function bundleKey(file, bytes) {
  const stamp = BUILD_STAMP.exec(bytes.toString('latin1', 0, 40));
  // the file's size and time too: a bundle changed by hand after the build is not the one stamped
  if (stamp) {
    const { size, mtimeMs } = statSync(file);
    return `${stamp[1]}${size.toString(16)}${Math.trunc(mtimeMs).toString(16)}`;
  }
  // hashing the 2.4 MB bundle costs an empty `amw scan` 6% of its instructions: only unstamped.
  // Required here, not at the top: loading node:crypto at every start cost 3% more, for a bundle
  // that may never need it
  const { createHash } = require('node:crypto');
  return createHash('sha256').update(bytes).digest('hex').slice(0, 24);
}

function saveCache(script, dir, cacheFile, name) {
  try {
    mkdirSync(dir, { recursive: true });
    // written whole, then renamed: a concurrent run reads the old file or the new, never half
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData());
    renameSync(tmp, cacheFile);
    // this Node's caches of an earlier build of the bundle are never read again
    const node = `${PREFIX}${process.version}-${process.arch}-`;
    const build = name.slice(0, name.lastIndexOf('-') + 1);
    for (const f of readdirSync(dir))
      if (f.startsWith(node) && f.endsWith(SUFFIX) && !f.startsWith(build))
        rmSync(join(dir, f), { force: true });
  } catch {
    // a cache folder that cannot be written only costs the next start its compile
  }
}

module.exports = { codeCacheDir, runWithCodeCache };
