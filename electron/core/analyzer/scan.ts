import { gitSync, mayBeInCheckout } from '../git/safe-git';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { Worker } from 'node:worker_threads';
import { appRoot } from '../paths';
import type { Effort, Language } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { loadKnowledge } from '../knowledge/load';
import { byText, type Edit, type Finding } from './analyze-file';
import { newlineStarts } from './line-matches';
import { analyzePythonFile, bomShifted, NOT_TEXT, type PythonResult } from './python-file';
import { pythonParser } from './python-parser';
import { loadRules, requirementLibs, ruleMsg, type Rule } from './rules';
import { msg, type Msg } from '../../../shared/api/text';

export type { Effort };

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
): Promise<PythonResult[]> {
  const parser = await pythonParser();
  const rules = loadRules();
  const out: PythonResult[] = [];
  for (const [i, f] of python.entries()) {
    if (i % 25 === 0) {
      opts.onProgress?.(before + i, total);
      // let the event loop breathe (progress events, cancel requests) on long scans
      await new Promise((r) => setImmediate(r));
      if (opts.signal?.aborted) throw new AmwError('CANCELLED', 'The scan was cancelled.');
    }
    out.push(analyzePythonFile(parser, f.abs, f.rel, rules, lang, opts.keepSources ?? true));
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
const CUDA_WHEEL =
  /\+cu\d+|download\.pytorch\.org\/whl\/cu\d+|^\s*nvidia-[a-z0-9-]+-cu\d+|^\s*cupy-cuda/;
/** A requirement as quoted in a list, without its quotes. */
const unquoted = (spec: string) => spec.replace(/^["']|["']$/g, '');
/** NVIDIA's CUDA runtime wheels as packaging metadata names them (`nvidia-cudnn-cu12`). */
const CUDA_RUNTIME_WHEEL = /^nvidia-[a-z0-9-]+-cu\d+$/;
const SCRIPT_FILE =
  /(\.(sh|bash|zsh|ya?ml|cfg|ini|toml|env|sbatch|slurm|pbs)|(^|\/)Dockerfile[^/]*|(^|\/)Makefile)$/;

/** A script or config without one of these holds nothing SCRIPT_PATTERNS looks for. */
const SCRIPT_WORDS =
  /CUDA|NCCL|nvidia|nccl|cuda|nvcr|MULTI_GPU|flash[-_]?attn|flash_attention|xformers|whl\/cu|\+cu\d/;

/** Launch scripts and configs: what a porter changes in them, line by line (not Python). */
const SCRIPT_PATTERNS: {
  re: RegExp;
  say: Record<Language, string>;
  edit?: (m: RegExpMatchArray) => string;
}[] = [
  {
    re: /\bCUDA_VISIBLE_DEVICES\b/,
    say: {
      en: 'CUDA_VISIBLE_DEVICES does not select NPUs: use ASCEND_RT_VISIBLE_DEVICES.',
      'zh-CN': 'CUDA_VISIBLE_DEVICES 不能选择 NPU：改用 ASCEND_RT_VISIBLE_DEVICES。',
    },
    edit: () => 'ASCEND_RT_VISIBLE_DEVICES',
  },
  {
    re: /\bPYTORCH_CUDA_ALLOC_CONF\b/,
    say: {
      en: 'PYTORCH_CUDA_ALLOC_CONF is ignored on NPU: use PYTORCH_NPU_ALLOC_CONF (same value).',
      'zh-CN': 'NPU 上会忽略 PYTORCH_CUDA_ALLOC_CONF：改用 PYTORCH_NPU_ALLOC_CONF（值不变）。',
    },
    edit: () => 'PYTORCH_NPU_ALLOC_CONF',
  },
  {
    re: /\bCUDA_LAUNCH_BLOCKING\b/,
    say: {
      en: 'CUDA_LAUNCH_BLOCKING does nothing on NPU: use ASCEND_LAUNCH_BLOCKING (debugging only).',
      'zh-CN':
        'CUDA_LAUNCH_BLOCKING 在 NPU 上不起作用：改用 ASCEND_LAUNCH_BLOCKING（仅用于调试）。',
    },
    edit: () => 'ASCEND_LAUNCH_BLOCKING',
  },
  {
    re: /\bNCCL_[A-Z0-9_]+/,
    say: {
      en: 'NCCL setting: HCCL has its own variables (HCCL_CONNECT_TIMEOUT, HCCL_IF_IP, HCCL_BUFFSIZE…).',
      'zh-CN': 'NCCL 设置：HCCL 有自己的变量（HCCL_CONNECT_TIMEOUT、HCCL_IF_IP、HCCL_BUFFSIZE…）。',
    },
  },
  {
    re: /\bnvidia-smi\b/,
    say: {
      en: 'nvidia-smi does not exist on Ascend: use npu-smi info (different output).',
      'zh-CN': '昇腾上没有 nvidia-smi：改用 npu-smi info（输出格式不同）。',
    },
  },
  {
    // a cluster's environment modules: `module load cuda/12.1 nccl/2.18`
    re: /^\s*module\s+(?:load|add)\b.*\b(?:cuda|cudnn|nccl)\b/i,
    say: {
      en: 'CUDA / NCCL environment modules: on Ascend source CANN instead (source /usr/local/Ascend/ascend-toolkit/set_env.sh).',
      'zh-CN':
        'CUDA / NCCL 环境模块：昇腾上改为加载 CANN（source /usr/local/Ascend/ascend-toolkit/set_env.sh）。',
    },
  },
  {
    re: /\bpip3?\s+install\b.*\b(?:flash[-_]attn|xformers)\b/,
    say: {
      en: 'Installs flash-attn or xformers, which have no NPU build: leave it out (SDPA and torch_npu.npu_fusion_attention instead).',
      'zh-CN':
        '安装没有 NPU 版本的 flash-attn 或 xformers：去掉（改用 SDPA 与 torch_npu.npu_fusion_attention）。',
    },
  },
  {
    // a training script's switch that makes it import flash-attn (`--use_flash_attn`,
    // `--attn_implementation flash_attention_2`): the Python side then fails at that import
    re: /--(?:use[-_])?flash[-_]?attn\w*\b|(?<=--attn[-_]implementation[= ]["']?)flash_attention_2\b/,
    say: {
      en: 'Turns on flash-attn, which has no NPU build: drop the switch (attention through SDPA, or torch_npu.npu_fusion_attention where the code offers it).',
      'zh-CN':
        '开启了没有 NPU 版本的 flash-attn：去掉该开关（注意力走 SDPA，或代码支持时改用 torch_npu.npu_fusion_attention）。',
    },
  },
  {
    // PyTorch's CUDA wheels: `--index-url …/whl/cu121`, a uv index, `torch==2.1.0+cu118`
    re: /(?<=download\.pytorch\.org\/whl\/)cu\d+\b|(?<=\btorch[\w-]*\s*==\s*[\d.]+)\+cu\d+\b/,
    say: {
      en: "PyTorch's CUDA build: on Ascend install the CPU build (the torch_npu release for that torch runs it on the NPU).",
      'zh-CN': 'PyTorch 的 CUDA 版本：昇腾上安装 CPU 版本（再配上该 torch 版本对应的 torch_npu）。',
    },
    edit: (m) => (m[0].startsWith('+') ? '' : 'cpu'),
  },
  {
    // Python inside a script (`python -c "…"`, a here-document): torch.cuda there as anywhere
    re: /\btorch\.cuda\.(?:is_available|device_count|get_device_name|get_device_properties|current_device|set_device|mem_get_info|memory_allocated|max_memory_allocated|empty_cache|synchronize|is_bf16_supported|get_device_capability)\b/,
    say: {
      en: 'torch.cuda in inline Python: import torch_npu in that snippet and ask torch.npu (torch.npu.is_available(), torch.npu.device_count()…).',
      'zh-CN':
        '内联 Python 中的 torch.cuda：在该片段中 import torch_npu，改用 torch.npu（torch.npu.is_available()、torch.npu.device_count()…）。',
    },
  },
  {
    re: /(?<=\bbackend["']?\s*[:=]\s*["']?|--(?:dist[-_])?backend[= ]["']?)nccl\b/,
    say: { en: 'Backend nccl: use hccl.', 'zh-CN': '后端 nccl：改用 hccl。' },
    edit: () => 'hccl',
  },
  {
    re: /(?<=\bdevice["']?\s*[:=]\s*["']?|--device[= ]["']?)cuda\b/,
    say: { en: 'Device cuda: use npu.', 'zh-CN': '设备 cuda：改用 npu。' },
    edit: () => 'npu',
  },
  {
    // accelerate's config: `distributed_type: MULTI_GPU`
    re: /(?<=\bdistributed_type["']?\s*[:=]\s*["']?)MULTI_GPU\b/,
    say: {
      en: 'accelerate on several NPUs is MULTI_NPU.',
      'zh-CN': '多卡 NPU 上的 accelerate 配置为 MULTI_NPU。',
    },
    edit: () => 'MULTI_NPU',
  },
  {
    re: /^\s*FROM\s+(nvidia\/cuda|nvcr\.io\/\S+|pytorch\/pytorch:\S*cuda\S*)/i,
    say: {
      en: 'CUDA base image: build on an Ascend image with CANN (e.g. ascendai/cann) instead.',
      'zh-CN': 'CUDA 基础镜像：改用带 CANN 的昇腾镜像（如 ascendai/cann）。',
    },
  },
];

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

/** `--exclude` globs: `*` within a path segment, `**` across segments; a folder excludes its contents. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('**')
      .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
      .join('.*')}(/.*)?$`,
  );

/** The torch_npu release built for a torch version, from the version matrix (newest first). */
function torchNpuFor(torch: string): string | null {
  const base = torch.replace(/\+.*$/, '');
  const rows = loadKnowledge().versions.matrix.filter((m) => m.torch === base);
  return (rows.find((m) => m.status === 'active') ?? rows[0])?.torchNpu ?? null;
}

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
      warnings.push(msg('stage-code:unreadable', { file: rel, error: (err as Error).message }));
      return null;
    }
  };
  /**
   * A text file's line rules, run on its text without a UTF-8 byte-order mark: columns as editors
   * count them, and the edits placed back in the file as it is (as for Python files).
   */
  const lineRules = (raw: string, scan: (src: string) => void) => {
    const bom = raw.charCodeAt(0) === 0xfeff;
    const before = findings.length;
    scan(bom ? raw.slice(1) : raw);
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
    if (/(^|\/)requirements[^/]*\.txt$/.test(rel)) {
      const src = text(abs, rel);
      if (src === null) continue;
      if (lineRules(src, (t) => scanRequirements(rel, t, finding)))
        sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
      continue;
    }
    // packages a setup.py / pyproject.toml / setup.cfg installs: CUDA-only ones are flagged
    if (/(^|\/)(setup\.py|pyproject\.toml|setup\.cfg)$/.test(rel)) {
      const src = text(abs, rel);
      if (src === null) continue;
      // the text the fixes edit (a setup.py with Python findings gets its Python source below)
      if (lineRules(src, (t) => scanPackageDependencies(rel, t, finding)))
        sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
      if (!rel.endsWith('.py')) {
        // a uv index of CUDA wheels is edited too: the text kept for that fix as well
        if (SCRIPT_WORDS.test(src) && lineRules(src, (t) => scanScript(rel, t, lang, finding)))
          sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
        continue;
      }
    }
    if (SCRIPT_FILE.test(rel)) {
      const src = text(abs, rel);
      if (src === null || !SCRIPT_WORDS.test(src)) continue;
      if (lineRules(src, (t) => scanScript(rel, t, lang, finding)))
        sources.set(rel, { text: src, kind: 'text', entryPoint: false, importsTorch: false });
      continue;
    }
    if (rel.endsWith('.py')) python.push({ abs, rel });
  }
  const results =
    python.length >= (opts.workerThreshold ?? (pool ? WARM_THRESHOLD : WORKER_THRESHOLD)) &&
    workerScript()
      ? await inWorkers(python, lang, opts, files.length - python.length, files.length)
      : await inProcess(python, lang, opts, files.length - python.length, files.length);
  const entries: Extract<PythonResult, { lines: number }>[] = [];
  const importing: { rel: string; imports: string[] }[] = [];
  let backend: { file: string; line: number; name: string; member: string } | undefined;
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
  if (findings.length)
    for (const r of entries) {
      findings.push(...r.entryAdditions!);
      if (r.source) sources.set(r.rel, r.source);
    }
  // kernels chosen by a backend switch with a PyTorch path: select it on NPU first, one
  // project-level finding instead of one per Triton kernel
  if (backend) {
    const triton = (id: string) => id === 'lib.triton' || ruleById.get(id)?.category === 'triton';
    const kernels = new Set(
      findings.filter((f) => f.ruleId === 'lib.triton-kernel' || triton(f.ruleId)),
    );
    const before = findings.length;
    for (let i = findings.length - 1; i >= 0; i--)
      if (kernels.has(findings[i]!) || findings[i]!.ruleId === 'lib.triton-kernel')
        findings.splice(i, 1);
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

type AddFinding = (
  ruleId: string,
  file: string,
  at: { line: number; column: number; endColumn: number },
  opts?: { vars?: Record<string, string>; message?: string; text?: Msg; edits?: Edit[] },
) => void;

/**
 * `install_requires=[…]` in setup.py, `dependencies = […]` in pyproject.toml, `install_requires =`
 * in setup.cfg: a quoted (or, in setup.cfg, listed) requirement naming a CUDA-only package.
 */
function scanPackageDependencies(rel: string, src: string, finding: AddFinding): void {
  if (!/install_requires|dependenc|requires/.test(src)) return;
  // Poetry's tables name packages as keys: `flash-attn = { version = "^2.5" }`
  let poetryTable = false;
  // set in the loop's callback, where TypeScript does not follow it
  let torch = null as { line: number; at: number; spec: string; listed: boolean } | null;
  let hasTorchNpu = false;
  const starts = newlineStarts(src);
  src.split('\n').forEach((line, i) => {
    if (/^\s*#/.test(line)) return;
    if (/^\s*\[/.test(line))
      poetryTable = /^\s*\[tool\.poetry\.(?:group\.[\w-]+\.)?(?:dev-)?dependencies\]/.test(line);
    const specs = poetryTable
      ? [/^\s*([A-Za-z0-9_.-]+)\s*=/.exec(line)].filter((m): m is RegExpExecArray => !!m)
      : rel.endsWith('.cfg')
        ? [/^\s+([A-Za-z0-9_.-]+)\s*(?:[<>=!~;[]|$)/.exec(line)].filter(
            (m): m is RegExpExecArray => !!m,
          )
        : [...line.matchAll(/["']([A-Za-z0-9_.-]+)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@][^"']*)?["']/g)];
    for (const m of specs) {
      const dashed = m[1]!.toLowerCase().replace(/[-_.]+/g, '-');
      if (dashed === 'torch-npu') hasTorchNpu = true;
      // a quoted list entry gets the torch_npu pin beside it; a Poetry or setup.cfg line is told
      // pinned only: a bare "torch" can be a keyword or a package name in setup.py's other fields
      if (dashed === 'torch' && !torch && /[<>=~]/.test(m[0]))
        torch = {
          line: i,
          at: m.index ?? 0,
          spec: m[0],
          listed: !poetryTable && !rel.endsWith('.cfg'),
        };
      const ruleId =
        packageRule(m[1]!) ?? (CUDA_RUNTIME_WHEEL.test(dashed) ? 'req.cuda-wheel' : '');
      if (!ruleId) continue;
      const col = (m.index ?? 0) + 1;
      // a CUDA runtime wheel alone on its line of a list goes with its line
      const alone =
        ruleId === 'req.cuda-wheel' &&
        !poetryTable &&
        /^\s*$/.test(line.slice(0, m.index)) &&
        /^\s*,?\s*$/.test(line.slice((m.index ?? 0) + m[0].length));
      finding(
        ruleId,
        rel,
        { line: i + 1, column: col, endColumn: col + m[0].length },
        {
          vars: { name: m[1]!, text: unquoted(m[0]) },
          edits: alone
            ? [
                {
                  start: starts[i]!,
                  end: Math.min(starts[i]! + line.length + 1, src.length),
                  text: '',
                },
              ]
            : undefined,
        },
      );
    }
  });
  if (!torch || hasTorchNpu) return;
  const { line, at, spec, listed } = torch;
  const end = starts[line]! + at + spec.length;
  const version = /==\s*([0-9][0-9A-Za-z.+]*)/.exec(spec)?.[1];
  const npu = version ? torchNpuFor(version) : null;
  const quote = spec[0]!;
  const text = src.slice(starts[line]!, starts[line + 1] ?? src.length).replace(/\r?\n$/, '');
  const pin = `${quote}torch-npu==${npu}${quote}`;
  // an entry alone on its line (`  "torch==2.1.0",`) gets its own line below; else it goes beside
  const own = /^(\s*)$/.exec(text.slice(0, at));
  const edit: Edit | null =
    !npu || !listed
      ? null
      : own && /^\s*,\s*$/.test(text.slice(at + spec.length))
        ? {
            start: starts[line]! + text.length,
            end: starts[line]! + text.length,
            text: `\n${own[1]}${pin},`,
          }
        : { start: end, end, text: `, ${pin}` };
  finding(
    'req.torch-npu',
    rel,
    { line: line + 1, column: at + 1, endColumn: at + spec.length + 1 },
    {
      vars: { text: unquoted(spec) },
      edits: edit ? [edit] : undefined,
    },
  );
}

/**
 * The rule for a distribution as packaging metadata spells it: any case and separator
 * (`Flash_Attn`), a nightly build (`triton-nightly`), a CUDA-versioned wheel (`cupy-cuda12x`).
 */
function packageRule(spelled: string): string | undefined {
  const libs = requirementLibs();
  const name = spelled.toLowerCase();
  const dashed = name.replace(/[-_.]+/g, '-');
  return (
    libs[name] ??
    libs[dashed] ??
    libs[dashed.replace(/-nightly$/, '')] ??
    libs[dashed.replace(/-cuda\d*x?$|-cu\d+$/, '')]
  );
}

function scanRequirements(rel: string, src: string, finding: AddFinding): void {
  const starts = newlineStarts(src);
  const lines = src.split('\n');
  let torchLine = -1;
  let torchVersion: string | null = null;
  let hasTorchNpu = false;
  lines.forEach((text, i) => {
    if (/^\s*#/.test(text)) return;
    const where = { line: i + 1, column: 1, endColumn: text.length + 1 };
    const spelled = /^\s*([A-Za-z0-9_.-]+)/.exec(text)?.[1];
    const name = spelled?.toLowerCase();
    // spelled as in setup.py and pyproject: `cupy-cuda12x`, `cudf-cu12`, `flash_attn`
    const ruleId = spelled ? packageRule(spelled) : undefined;
    const wheel = CUDA_WHEEL.test(text);
    // `cupy-cuda12x`: the library's own finding, with the CUDA wheel's removal (not two findings)
    if (ruleId)
      finding(ruleId, rel, where, {
        vars: { name: spelled! },
        edits: wheel ? [cudaWheelEdit(text, starts[i]!)] : undefined,
      });
    else if (wheel)
      finding('req.cuda-wheel', rel, where, {
        vars: { text: text.trim() },
        edits: [cudaWheelEdit(text, starts[i]!)],
      });
    if (name === 'torch') {
      torchLine = i;
      torchVersion = /==\s*([0-9][0-9A-Za-z.+]*)/.exec(text)?.[1] ?? null;
    }
    if (name === 'torch-npu' || name === 'torch_npu') hasTorchNpu = true;
  });
  if (torchLine < 0 || hasTorchNpu) return;
  const text = lines[torchLine]!;
  const npu = torchVersion ? torchNpuFor(torchVersion) : null;
  const at = starts[torchLine]! + text.length;
  finding(
    'req.torch-npu',
    rel,
    { line: torchLine + 1, column: 1, endColumn: text.length + 1 },
    {
      vars: { text: text.trim() },
      // without a pinned torch there is no release to name; the env stage tells the host's one
      edits: npu ? [{ start: at, end: at, text: `\ntorch-npu==${npu}` }] : undefined,
    },
  );
}

/** torch==2.1.0+cu118 → torch==2.1.0; the cu118 index → the CPU one; CUDA runtime wheels go. */
function cudaWheelEdit(line: string, at: number): Edit {
  const local = /\+cu\d+/.exec(line);
  if (local) return { start: at + local.index, end: at + local.index + local[0].length, text: '' };
  const index = /(download\.pytorch\.org\/whl\/)(cu\d+)/.exec(line);
  if (index) {
    const s = at + index.index + index[1]!.length;
    return { start: s, end: s + index[2]!.length, text: 'cpu' };
  }
  return { start: at, end: at + line.length + 1, text: '' };
}

function scanScript(rel: string, src: string, lang: Language, finding: AddFinding): void {
  const starts = newlineStarts(src);
  src.split('\n').forEach((line, i) => {
    if (/^\s*#/.test(line) && !/^\s*#!/.test(line)) return;
    for (const p of SCRIPT_PATTERNS) {
      const m = p.re.exec(line);
      if (!m) continue;
      // one finding a line, each match on it edited (`torch==…+cu121 --index-url …/whl/cu121`)
      const edit = p.edit;
      const edits = edit
        ? [...line.matchAll(new RegExp(p.re.source, 'g'))].map((e) => ({
            start: starts[i]! + e.index!,
            end: starts[i]! + e.index! + e[0].length,
            text: edit(e),
          }))
        : undefined;
      finding(
        'script.cuda-env',
        rel,
        { line: i + 1, column: m.index + 1, endColumn: m.index + m[0].length + 1 },
        {
          vars: { text: p.say[lang] },
          text: ruleMsg('script.cuda-env', 'message', { text: p.say }),
          edits,
        },
      );
    }
  });
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
