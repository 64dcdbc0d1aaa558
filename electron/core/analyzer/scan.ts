import { gitSync, mayBeInCheckout } from '../git/safe-git';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { Worker } from 'node:worker_threads';
import { appRoot } from '../paths';
import type { Effort, Language } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { byText, TooCostly, type BackendSwitch, type Edit, type Finding } from './analyze-file';
import { backendChoices } from './backend-choices';
import {
  type AddFinding,
  isCondaEnvironment,
  scanCondaEnvironment,
  scanYamlPackageLists,
  scanPackageDependencies,
  scanRequirements,
} from './dependency-files';
import {
  analyzePythonFile,
  bomShifted,
  fileBudgetMs,
  NOT_TEXT,
  type PythonResult,
} from './python-file';
import { pythonParser } from './python-parser';
import { SCRIPT_FILE, SCRIPT_WORDS, scanScript } from './script-files';
import { cudaExtensionNames, loadRules, ruleMsg, withExtensionNames, type Rule } from './rules';
import { msg, type Msg } from '../../../shared/api/text';
import { fsErrorText } from '../fs-error';

/**
 * pip's requirements files by the names projects give them: requirements*.txt (or insightface's
 * singular `requirement.txt`), a prefixed one
 * (`vim_requirements.txt`, `dev-requirements.txt`), `reqs.txt`, pip-tools' `.in`, Rye's and
 * pip-compile's locked `requirements.lock` / `requirements-dev.lock`, and any file of a
 * `requirements/` folder.
 */
export const REQUIREMENTS_FILE =
  /(?:^|\/)(?:[^/]*[-_.])?req(?:uirements?|s)(?:[-_.][^/]*)?\.(?:txt|in)$|(?:^|\/)requirements(?:[-_.][^/]*)?\.lock$|(?:^|\/)requirements\/[^/]+\.(?:txt|in)$/;

export type { Effort };

/** A YAML key that lists pip packages (scanYamlPackageLists reads which). */
const PACKAGE_LIST =
  /^[ \t]*(?:-[ \t]+)?(?:pip|packages|python_packages|pip_packages|requirements):[ \t]*(?:#.*)?\r?$/m;

export interface SourceFile {
  text: string;
  /** python: parsed; text: requirements, scripts and configs (line rules, no parse check). */
  kind: 'python' | 'text';
  entryPoint: boolean;
  importsTorch: boolean;
}

export interface ScanResult {
  root: string;
  files: number;
  lines: number;
  findings: Finding[];
  effort: Effort;
  /** Files that could not be read or parsed cleanly (findings there may be incomplete). */
  warnings: Msg[];
  /** Files not analysed and why (binary files): neither their lines nor findings count. */
  skipped: { file: string; reason: string }[];
  /** Per file with findings: its text as scanned, for fixes and review. */
  sources: Map<string, SourceFile>;
}

export interface ScanOptions {
  exclude?: string[];
  lang?: Language;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** From how many Python files on the scan uses worker threads (default WORKER_THRESHOLD). */
  workerThreshold?: number;
  /**
   * Keep each file's text for fixes and review (default). Off, memory stays bounded by the
   * largest file rather than the tree: a plain `amw scan` only prints findings.
   */
  keepSources?: boolean;
  /**
   * How long one Python file's analysis may take (ms) before it is given up and reported
   * (default: python-file.ts's fileBudgetMs of its size).
   */
  fileBudgetMs?: number;
}

/**
 * Below this many Python files, starting workers (each compiles the parser) costs more than it
 * saves (`npm run bench scan` shows the trade-off); warm workers are used from WARM_THRESHOLD on.
 */
export const WORKER_THRESHOLD = 1500;
const WARM_THRESHOLD = 100;
const WORKERS = Math.max(1, Math.min(availableParallelism(), 4));

/** The built worker (dist/scan-worker.js); absent when running from sources (tests, tsx). */
function workerScript(): string | null {
  const file = join(appRoot(), 'dist', 'scan-worker.js');
  return existsSync(file) ? file : null;
}

async function inProcess(
  python: { abs: string; rel: string }[],
  lang: Language,
  opts: ScanOptions,
  before: number,
  total: number,
  extensionNames: string[],
): Promise<PythonResult[]> {
  const parser = await pythonParser();
  const rules = withExtensionNames(loadRules(), extensionNames);
  const out: PythonResult[] = [];
  for (const [i, f] of python.entries()) {
    if (i % 25 === 0) {
      opts.onProgress?.(before + i, total);
      // let the event loop breathe (progress events, cancel requests) on long scans
      await new Promise((r) => setImmediate(r));
      if (opts.signal?.aborted) throw new AmwError('CANCELLED', 'The scan was cancelled.');
    }
    out.push(
      analyzePythonFile(
        parser,
        f.abs,
        f.rel,
        rules,
        lang,
        opts.keepSources ?? true,
        opts.fileBudgetMs,
      ),
    );
  }
  return out;
}

/**
 * Worker threads kept for the life of the process: the first scan that needs them pays for
 * compiling the parser in each; later scans (the app, serve mode) find them warm. Unref'd, so a
 * CLI process still exits when its work is done.
 */
let pool: Worker[] | null = null;
let nextRequest = 1;

function workers(): Worker[] {
  if (pool) return pool;
  const script = workerScript()!;
  pool = Array.from({ length: WORKERS }, () => {
    const w = new Worker(script);
    w.unref();
    // a worker that dies takes the pool with it: the next scan starts a fresh one
    w.once('exit', () => (pool = null));
    return w;
  });
  return pool;
}

/** Python files split over the worker threads (every core); a cancel stops them at once. */
async function inWorkers(
  python: { abs: string; rel: string }[],
  lang: Language,
  opts: ScanOptions,
  before: number,
  total: number,
  extensionNames: string[],
): Promise<PythonResult[]> {
  const ws = workers();
  const id = nextRequest++;
  const out: PythonResult[] = [];
  const onAbort = () => ws.forEach((w) => void w.terminate());
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(
      ws.map(
        (w, n) =>
          new Promise<void>((resolve, reject) => {
            const onMessage = (m: { id: number; results: PythonResult[]; done?: boolean }) => {
              if (m.id !== id) return;
              for (const r of m.results) out.push(r);
              opts.onProgress?.(before + out.length, total);
              if (m.done) {
                cleanup();
                resolve();
              }
            };
            const onExit = (code: number) => {
              cleanup();
              reject(
                opts.signal?.aborted
                  ? new AmwError('CANCELLED', 'The scan was cancelled.')
                  : new Error(`a scan worker stopped with code ${code}`),
              );
            };
            const cleanup = () => {
              w.off('message', onMessage);
              w.off('exit', onExit);
              w.off('error', reject);
            };
            w.on('message', onMessage);
            w.once('exit', onExit);
            w.once('error', reject);
            // interleaved, so big and small files spread evenly
            w.postMessage({
              id,
              lang,
              keepSources: opts.keepSources ?? true,
              budgetMs: opts.fileBudgetMs,
              extensionNames,
              files: python.filter((_, i) => i % ws.length === n),
            });
          }),
      ),
    );
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  return out;
}

const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  '__pycache__',
  '.venv',
  'venv',
  '.tox',
  '.mypy_cache',
  'build',
  'dist',
  '.eggs',
]);
/** Output folders skipped by the plain walk, except where they hold Python source. */
const OUTPUT_DIRS = new Set(['build', 'dist']);
const isPackage = (dir: string) =>
  existsSync(join(dir, '__init__.py')) ||
  (() => {
    try {
      return readdirSync(dir).some((f) => f.endsWith('.py'));
    } catch {
      return false;
    }
  })();
/**
 * The columns of the quoted string around a finding on its line (`"xformers @ https://…"`), or
 * the finding's own where it is not in quotes.
 */
function quotedSpan(line: string, at: { column: number; endColumn: number }) {
  const open = Math.max(line.lastIndexOf('"', at.column - 2), line.lastIndexOf("'", at.column - 2));
  const close = open < 0 ? -1 : line.indexOf(line[open]!, at.endColumn - 1);
  return (open < 0 || close < 0 ? [at.column, at.endColumn] : [open + 1, close + 1]) as [
    number,
    number,
  ];
}

/** What marks a project's root folder. */
const PROJECT_FILES = ['setup.py', 'setup.cfg', 'pyproject.toml'];

/**
 * The folder (as a prefix of relative paths, '' for all) whose kernels a backend switch in `rel`
 * chooses: its project's — the nearest folder above it with setup.py / pyproject.toml /
 * setup.cfg, else the top folder it is in (a scan of several projects side by side, or of one
 * package), else the whole scan.
 */
function switchScope(rel: string, listed: Set<string>): string {
  const dirs = rel.split('/').slice(0, -1);
  for (let n = dirs.length; n >= 0; n--) {
    const dir = dirs.slice(0, n).join('/');
    if (PROJECT_FILES.some((name) => listed.has(dir ? `${dir}/${name}` : name)))
      return dir ? `${dir}/` : '';
  }
  return dirs.length ? `${dirs[0]}/` : '';
}

/** The largest JSON file read as a config (DeepSpeed's, a model's): bigger ones are data. */
const MAX_JSON_CONFIG = 256 * 1024;

/** Files git would commit (honours .gitignore); a plain walk where the folder is no git checkout. */
function listFiles(root: string, exclude: RegExp[]): string[] {
  const files = (mayBeInCheckout(root) ? gitFiles(root) : null) ?? walkedFiles(root);
  if (!exclude.length) return files;
  const rel = relativeTo(root);
  return files.filter((f) => !exclude.some((re) => re.test(rel(f))));
}

/**
 * A listed file's path relative to root, with `/`: cut after root's own path where the listing
 * made it that way (path.relative normalised both paths, character by character, for every
 * file: hot enough that V8 spent ~10 ms optimising Node's normaliser in a one-shot scan).
 */
function relativeTo(root: string): (file: string) => string {
  const prefix = join(root, sep);
  return (file) => {
    const rel = file.startsWith(prefix) ? file.slice(prefix.length) : relative(root, file);
    return sep === '/' ? rel : rel.split(sep).join('/');
  };
}

/** What `git ls-files` lists that is still there (a tracked file may be deleted); null if git fails. */
function gitFiles(root: string): string[] | null {
  // git lists clean relative paths with `/`: joined by concatenation where that is the separator
  const prefix = join(root, sep);
  try {
    return gitSync(root, ['ls-files', '-co', '--exclude-standard', '-z'], {
      maxBuffer: 256 * 1024 * 1024,
      timeout: 120_000,
    })
      .split('\0')
      .filter(Boolean)
      .map((f) => (sep === '/' ? prefix + f : join(root, f)))
      .filter((f) => existsSync(f));
  } catch {
    return null;
  }
}

/** Every file under root, as the directory listings name them (each one just read: no stat). */
function walkedFiles(root: string): string[] {
  const files: string[] = [];
  // Paths as path.join would make them, by concatenation: `within` is `dir` normalised with a
  // separator at its end, and a listed name holds no separator. path.join per entry was
  // ~0.03-0.07 G instructions over /tmp/bt's 2,400 folders, mostly run before V8 compiles it.
  const walk = (dir: string, within: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        // build/ and dist/ are output folders, unless they are a Python package (mmengine.dist)
        const sub = within + entry.name;
        if (!SKIP_DIRS.has(entry.name) || (OUTPUT_DIRS.has(entry.name) && isPackage(sub)))
          walk(sub, sub + sep);
      } else if (entry.isFile()) files.push(within + entry.name);
    }
  };
  walk(root, join(root, sep));
  return files;
}

/** A file named without an extension (`scripts/parsnip_train`, `bin/serve`, `LICENSE`). */
const NO_EXTENSION = /(?:^|\/)[^/.]+$/;
const PYTHON_SHEBANG = /^#![^\n]*\bpython[\d.]*(?:\s|$)/;

/** An executable Python script without an extension, told by its first line's `#!…python`. */
function pythonScript(abs: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(abs, 'r');
    const head = Buffer.alloc(128);
    const n = readSync(fd, head, 0, head.length, 0);
    return PYTHON_SHEBANG.test(head.toString('latin1', 0, n));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `--exclude` globs: `*` within a path segment, `**` across segments; a folder excludes its contents. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('**')
      .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
      .join('.*')}(/.*)?$`,
  );

export async function scanProject(path: string, opts: ScanOptions = {}): Promise<ScanResult> {
  const stat = existsSync(path) ? statSync(path) : null;
  if (!stat?.isDirectory() && !stat?.isFile()) {
    throw new AmwError('NOT_FOUND', msg('errors.text.notAFileOrFolder', { path }), { root: path });
  }
  // one file (`amw scan train.py`) is scanned as the only file of its folder
  const root = stat.isFile() ? dirname(path) : path;
  const lang = opts.lang ?? 'en';
  const rules = loadRules();
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  const files = stat.isFile() ? [path] : listFiles(root, (opts.exclude ?? []).map(glob));
  const relPath = relativeTo(root);
  const findings: Finding[] = [];
  const warnings: Msg[] = [];
  const sources = new Map<string, SourceFile>();
  let lines = 0;
  let pyFiles = 0;
  /** Modules the project's setup.py files build with CUDAExtension. */
  const extensionNames = new Set<string>();
  const finding = (
    ruleId: string,
    file: string,
    at: { line: number; column: number; endColumn: number },
    opts: { vars?: Record<string, string>; message?: string; text?: Msg; edits?: Edit[] } = {},
  ) => {
    const r: Rule = ruleById.get(ruleId)!;
    const text = {
      message: opts.text ?? ruleMsg(ruleId, 'message', opts.vars),
      ...(r.fix ? { fix: ruleMsg(ruleId, 'fix', opts.vars) } : {}),
    };
    const fill = (t: string) => t.replace(/\{\{(\w+)\}\}/g, (_, k: string) => opts.vars?.[k] ?? '');
    findings.push({
      ruleId,
      file,
      line: at.line,
      column: at.column,
      endLine: at.line,
      endColumn: at.endColumn,
      severity: r.severity,
      category: r.category,
      message: opts.message ?? fill(r.message[lang]),
      ...(r.fix || opts.edits
        ? { fix: { description: fill(r.fix?.[lang] ?? ''), edits: opts.edits ?? [] } }
        : {}),
      text,
    });
  };
  const skipped: { file: string; reason: string }[] = [];
  const text = (file: string, rel: string): string | null => {
    try {
      const t = readFileSync(file, 'utf8');
      if (t.includes('\0')) {
        skipped.push({ file: rel, reason: NOT_TEXT });
        return null;
      }
      return t;
    } catch (err) {
      warnings.push(msg('stage-code:unreadable', { file: rel, error: fsErrorText(err) }));
      return null;
    }
  };
  /**
   * A text file's line rules, run on its text without a UTF-8 byte-order mark: columns as editors
   * count them, and the edits placed back in the file as it is (as for Python files).
   */
  const lineRules = (rel: string, raw: string, scan: (src: string, deadline: number) => void) => {
    const bom = raw.charCodeAt(0) === 0xfeff;
    const before = findings.length;
    // a script's patterns read each line whole: text made to be slow to read is given up as a
    // Python file is, its findings with it
    const budget = opts.fileBudgetMs ?? fileBudgetMs(raw.length);
    try {
      scan(bom ? raw.slice(1) : raw, performance.now() + budget);
    } catch (err) {
      if (!(err instanceof TooCostly)) throw err;
      findings.length = before;
      warnings.push(
        msg('stage-code:tooCostly', { file: rel, seconds: Math.round(budget / 100) / 10 }),
      );
      return false;
    }
    if (bom) for (let i = before; i < findings.length; i++) bomShifted(findings[i]!);
    return findings.length > before;
  };

  // Python files are the heavy part: they go to the in-process analyzer or to worker threads
  const python: { abs: string; rel: string }[] = [];
  for (const [index, abs] of files.entries()) {
    if (index % 200 === 0) {
      opts.onProgress?.(index, files.length);
      // let the event loop breathe (progress events, cancel requests) on long scans
      await new Promise((r) => setImmediate(r));
      if (opts.signal?.aborted) throw new AmwError('CANCELLED', 'The scan was cancelled.');
    }
    const rel = relPath(abs);
    if (/\.(cu|cuh)$/.test(rel)) {
      finding(
        'ext.cuda-extension',
        rel,
        { line: 1, column: 1, endColumn: 1 },
        {
          message:
            lang === 'en'
              ? `${rel} is CUDA C++ source: it has to be ported.`
              : `${rel} 是 CUDA C++ 源码，需要移植。`,
          text: msg('stage-code:cudaSource', { file: rel }),
        },
      );
      continue;
    }
    if (REQUIREMENTS_FILE.test(rel)) {
      const src = text(abs, rel);
      if (src === null) continue;
      if (lineRules(rel, src, (t) => scanRequirements(rel, t, finding)))
        sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
      continue;
    }
    // packages a setup.py / pyproject.toml / setup.cfg installs: CUDA-only ones are flagged
    if (/(^|\/)(setup\.py|pyproject\.toml|setup\.cfg)$/.test(rel)) {
      const src = text(abs, rel);
      if (src === null) continue;
      // each flagged dependency's quoted requirement, by line: [first, last] columns
      const flagged = new Map<number, [number, number][]>();
      let lines: string[] | undefined;
      const dependency: AddFinding = (ruleId, file, at, o) => {
        const spans = flagged.get(at.line) ?? [];
        spans.push(quotedSpan((lines ??= src.split('\n'))[at.line - 1] ?? '', at));
        flagged.set(at.line, spans);
        finding(ruleId, file, at, o);
      };
      // the text the fixes edit (a setup.py with Python findings gets its Python source below)
      if (lineRules(rel, src, (t) => scanPackageDependencies(rel, t, dependency)))
        sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
      // the CUDA extensions it builds: their call sites are found by these names too
      if (rel.endsWith('.py') && src.includes('CUDAExtension'))
        for (const name of cudaExtensionNames(src)) extensionNames.add(name);
      if (!rel.endsWith('.py')) {
        // a dependency already flagged is one finding: `"xformers @ …/whl/cu121/…"` is xformers'
        const unflagged: AddFinding = (ruleId, file, at, o) => {
          const within = flagged.get(at.line)?.some(([a, b]) => at.column >= a && at.column <= b);
          if (!within) finding(ruleId, file, at, o);
        };
        // a uv index of CUDA wheels is edited too: the text kept for that fix as well
        if (
          SCRIPT_WORDS.test(src) &&
          lineRules(rel, src, (t, deadline) => scanScript(rel, t, lang, unflagged, deadline))
        )
          sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
        continue;
      }
    }
    if (SCRIPT_FILE.test(rel)) {
      // a JSON file past a config's size is data (a dataset, a tokenizer), not read
      if (
        rel.endsWith('.json') &&
        (statSync(abs, { throwIfNoEntry: false })?.size ?? 0) > MAX_JSON_CONFIG
      )
        continue;
      const src = text(abs, rel);
      if (src === null) continue;
      // conda's environment.yml is a dependency list first (and may set variables too)
      const conda = isCondaEnvironment(rel, src)
        ? lineRules(rel, src, (t) => scanCondaEnvironment(rel, t, finding))
        : // a runtime's pip list in another YAML (Ray's runtime_env, a bentofile)
          /\.ya?ml$/i.test(rel) &&
          PACKAGE_LIST.test(src) &&
          lineRules(rel, src, (t) => scanYamlPackageLists(rel, t, finding));
      const script =
        SCRIPT_WORDS.test(src) &&
        lineRules(rel, src, (t, deadline) => scanScript(rel, t, lang, finding, deadline));
      if (conda || script)
        sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
      continue;
    }
    if (rel.endsWith('.py') || (NO_EXTENSION.test(rel) && pythonScript(abs)))
      python.push({ abs, rel });
  }
  const named = [...extensionNames];
  const results =
    python.length >= (opts.workerThreshold ?? (pool ? WARM_THRESHOLD : WORKER_THRESHOLD)) &&
    workerScript()
      ? await inWorkers(python, lang, opts, files.length - python.length, files.length, named)
      : await inProcess(python, lang, opts, files.length - python.length, files.length, named);
  const entries: Extract<PythonResult, { lines: number }>[] = [];
  const importing: { rel: string; imports: string[] }[] = [];
  let backend: (BackendSwitch & { file: string }) | undefined;
  for (const r of results) {
    if (!r) continue;
    if ('error' in r) {
      warnings.push(msg('stage-code:unreadable', { file: r.rel, error: r.error }));
      continue;
    }
    if ('skipped' in r) {
      skipped.push({ file: r.rel, reason: r.skipped });
      continue;
    }
    if ('failed' in r) {
      warnings.push(msg('stage-code:analysisFailed', { file: r.rel, error: r.failed }));
      continue;
    }
    if ('tooCostly' in r) {
      warnings.push(
        msg('stage-code:tooCostly', { file: r.rel, seconds: Math.round(r.tooCostly / 100) / 10 }),
      );
      continue;
    }
    if (r.backendSwitch && !backend) backend = { file: r.rel, ...r.backendSwitch };
    if (r.imports) importing.push({ rel: r.rel, imports: r.imports });
    if (r.entryAdditions) entries.push(r);
    pyFiles++;
    lines += r.lines;
    if (r.parseErrors) warnings.push(msg('stage-code:syntaxErrors', { file: r.rel }));
    findings.push(...r.findings);
    if (r.source) sources.set(r.rel, r.source);
  }
  // the text that quiets a rule in a file may be in a project module it imports: the training
  // loop in train.py, autocast in the model's forward
  if (importing.length) {
    const listed = new Set(files.map(relPath));
    const quieting = rules
      .filter((r) => r.unlessSource)
      .map((r) => ({ id: r.id, re: new RegExp(r.unlessSource!) }));
    // per project module: the rules its text quiets (a module imported by many files read once)
    const quietBy = new Map<string, string[]>();
    const quietOf = (file: string) => {
      let ids = quietBy.get(file);
      if (!ids) {
        let src = '';
        try {
          src = readFileSync(join(root, file), 'utf8');
        } catch {
          // unreadable now: it quiets nothing
        }
        quietBy.set(file, (ids = quieting.filter((q) => q.re.test(src)).map((q) => q.id)));
      }
      return ids;
    };
    for (const { rel, imports } of importing) {
      const quiet = new Set(projectModulesImported(rel, imports, listed).flatMap(quietOf));
      if (quiet.size)
        for (let i = findings.length - 1; i >= 0; i--)
          if (findings[i]!.file === rel && quiet.has(findings[i]!.ruleId)) findings.splice(i, 1);
    }
  }
  // a project that needs porting: its entry points import torch_npu (and set the compile mode)
  // even where they hold no CUDA code themselves — when they import torch or the project's own
  // package (decided with the file, python-file.ts: no text waits here for the end of the scan)
  if (findings.length) {
    // the project's own top-level names: its folders and modules, at any depth (a repository
    // scanned from above its root, or several side by side)
    let own: Set<string> | undefined;
    const ownNames = () => {
      if (own) return own;
      own = new Set();
      for (const f of files) {
        const parts = relPath(f).split('/');
        const last = parts.pop()!;
        for (const d of parts) own.add(d);
        if (last.endsWith('.py')) own.add(last.slice(0, -3));
      }
      return own;
    };
    for (const r of entries) {
      if (r.entryNeeds && !r.entryNeeds.some((n) => ownNames().has(n))) continue;
      findings.push(...r.entryAdditions!);
      if (r.source) sources.set(r.rel, r.source);
    }
  }
  // kernels chosen by a backend switch with a PyTorch path: select it on NPU first, one
  // project-level finding instead of one per Triton kernel
  if (backend) {
    const triton = (id: string) => id === 'lib.triton' || ruleById.get(id)?.category === 'triton';
    // the switch chooses the kernels of its own project, not those of another one scanned along
    const scope = switchScope(backend.file, new Set(files.map(relPath)));
    const kernels = new Set(
      findings.filter(
        (f) => f.file.startsWith(scope) && (f.ruleId === 'lib.triton-kernel' || triton(f.ruleId)),
      ),
    );
    const before = findings.length;
    for (let i = findings.length - 1; i >= 0; i--)
      if (kernels.has(findings[i]!)) findings.splice(i, 1);
    finding(
      'project.backend-switch',
      backend.file,
      { line: backend.line, column: 1, endColumn: 1 },
      {
        vars: {
          name: backend.name,
          member: backend.member,
          count: String(before - findings.length),
        },
      },
    );
    // and where the project chooses a GPU backend: the lines that select the PyTorch one
    for (const { abs, rel } of python) {
      if (!rel.startsWith(scope)) continue;
      let text = sources.get(rel)?.text;
      if (text === undefined)
        try {
          text = readFileSync(abs, 'utf8');
        } catch {
          continue; // unreadable now: told with the file's own analysis
        }
      const choices = backendChoices(text, backend);
      for (const c of choices) {
        // the setting's string is the switch's value, not a device (`backend = "cuda"`)
        for (let i = findings.length - 1; i >= 0; i--) {
          const f = findings[i]!;
          if (
            f.file === rel &&
            f.line === c.line &&
            f.ruleId === 'device.cuda-string' &&
            f.column < c.endColumn &&
            c.column < f.endColumn
          )
            findings.splice(i, 1);
        }
        finding(
          'project.backend-choice',
          rel,
          { line: c.line, column: c.column, endColumn: c.endColumn },
          {
            vars: {
              text: c.text,
              name: backend.name,
              // as the choice is written: the member, or the setting's string
              member: c.text.startsWith(backend.name)
                ? `${backend.name}.${backend.member}`
                : c.replacement,
            },
            edits: [{ start: c.start, end: c.end, text: c.replacement }],
          },
        );
      }
      if (choices.length && !sources.has(rel))
        sources.set(rel, { text, kind: 'python', entryPoint: false, importsTorch: false });
    }
  }
  opts.onProgress?.(files.length, files.length);
  findings.sort((a, b) => byText(a.file, b.file) || a.line - b.line || a.column - b.column);
  return {
    root,
    files: pyFiles,
    lines,
    findings,
    effort: estimateEffort(findings),
    warnings,
    skipped: skipped.sort((a, b) => byText(a.file, b.file)),
    sources,
  };
}

/**
 * The project files a file imports: `hstu.model` is hstu/model.py or hstu/model/__init__.py under
 * the file's folder or any folder above it (a script's folder and the project root are where
 * Python looks); `.model` is beside the file.
 */
function projectModulesImported(rel: string, imports: string[], listed: Set<string>): string[] {
  const dirs = rel.split('/').slice(0, -1);
  const modules = new Set<string>();
  for (const spec of imports) {
    const dots = /^\.*/.exec(spec)![0].length;
    const path = spec.slice(dots).split('.').filter(Boolean).join('/');
    const bases = dots
      ? dots - 1 <= dirs.length
        ? [dirs.slice(0, dirs.length - (dots - 1)).join('/')]
        : []
      : dirs.map((_, i) => dirs.slice(0, dirs.length - i).join('/')).concat('');
    for (const base of bases) {
      const stem = [base, path].filter(Boolean).join('/');
      for (const file of [`${stem}.py`, `${stem}/__init__.py`])
        if (stem && listed.has(file) && file !== rel) modules.add(file);
    }
  }
  return [...modules];
}

/** Seed 000's four dimensions of migration work, weighted by what each costs to port. */
export function estimateEffort(findings: Finding[]): Effort {
  const count = (cats: string[]) => findings.filter((f) => cats.includes(f.category)).length;
  const d = {
    device: count(['device', 'cuda-api', 'add', 'unsupported-op']),
    thirdParty: count(['third-party', 'extension', 'optimizer', 'triton', 'attention']),
    mixedPrecision: count(['amp']),
    multiCard: count(['distributed']),
  };
  const heavy = findings.filter(
    (f) => f.category === 'extension' || (f.category === 'third-party' && f.severity === 'error'),
  ).length;
  const score = d.device + 3 * d.thirdParty + 2 * d.mixedPrecision + 2 * d.multiCard + 10 * heavy;
  const notes: string[] = [];
  if (heavy)
    notes.push(`${heavy} CUDA-only libraries or kernels need replacing or porting: the long pole.`);
  if (d.multiCard) notes.push('Distributed code: HCCL, per-rank set_device, device_ids.');
  return {
    level: score >= 60 || heavy >= 3 ? 'high' : score >= 15 || heavy ? 'medium' : 'low',
    dimensions: d,
    notes,
  };
}
