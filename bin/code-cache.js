// Runs a CommonJS bundle with V8's code cache: the bytecode V8 compiled for it in an earlier run,
// kept in the user's cache folder, so a one-shot command does not parse and compile the CLI again
// at every start (Node 20 has no compile cache of its own). The cache is only ever an optimisation:
// missing, stale (another bundle or Node), rejected by V8 or unwritable, the bundle runs as it is.
const {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
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
// The function Node's loader wraps a CommonJS module in; the build writes it into the bundle
// (scripts/build.mjs), any other file is wrapped here.
const WRAPPER = '(function (exports, require, module, __filename, __dirname) {';
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
  // Decoded as UTF-8 into V8's heap (the build keeps the bundle ASCII: one byte a character).
  // Latin-1 made a string this size an external one, which V8 then compiled the bundle's
  // functions from more slowly than the copy it saved (an empty `amw scan` +4% CPU).
  const source = bytes.toString('utf8');
  const stamp = BUILD_STAMP.exec(source.slice(0, 40));
  // keyed by the bundle's content and the Node that compiled it; V8 checks its own version and
  // flags again, and refuses data that is not its own
  const key = bundleKey(file, bytes, stamp);
  const which = /^[a-z][a-z-]{0,30}$/.test(command ?? '') ? command : 'other';
  const name = `${PREFIX}${process.version}-${process.arch}-${key}-${which}${SUFFIX}`;
  const cacheFile = dir ? join(dir, name) : null;
  let cachedData;
  try {
    if (cacheFile) cachedData = readInto(bytes, cacheFile);
  } catch {
    // none yet, or unreadable: compiled from source, and written at exit if it can be
  }
  // a bundle the build wrapped is compiled as read: joined to the wrapper here, V8 flattened the
  // joined text into one more copy of the whole bundle before compiling it
  const wrapped = stamp !== null && source.startsWith(WRAPPER, stamp[0].length);
  const script = new Script(wrapped ? source : `${WRAPPER} ${source}\n})`, {
    filename: file,
    cachedData,
    // the bundle's import() of an external package goes to Node's own loader
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cacheFile && (!cachedData || script.cachedDataRejected))
    // at exit, so the cache also holds the functions this run compiled lazily (most of them)
    process.once('exit', () => saveCache(script, dir, cacheFile, name));
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
}

/**
 * The file's bytes, read into `buffer` (the bundle's, decoded by now) where they fit: a buffer of
 * their own was 1 MB of fresh memory, each page a page fault (~12 µs on a virtual machine).
 */
function readInto(buffer, file) {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size >= buffer.length) return readFileSync(fd);
    let n = 0;
    for (let read; n < buffer.length && (read = readSync(fd, buffer, n, buffer.length - n));)
      n += read;
    // grown since its size was read: read whole
    return n < buffer.length ? buffer.subarray(0, n) : readFileSync(file);
  } finally {
    closeSync(fd);
  }
}

/** The build's stamp (scripts/build.mjs), then the file's size and time; else its hash. */
function bundleKey(file, bytes, stamp) {
  // the file's size and time too: a bundle changed by hand after the build is not the one stamped
  if (stamp) {
    const { size, mtimeMs } = statSync(file);
    return `${stamp[1]}${size.toString(16)}${Math.trunc(mtimeMs).toString(16)}`;
  }
  // hashing the bundle (2.4 MB then) cost an empty `amw scan` 6% of its instructions: only unstamped.
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
