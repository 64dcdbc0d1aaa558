import { readFileSync } from 'node:fs';
import type { Parser } from 'web-tree-sitter';
import type { Language } from '../../../shared/api';
import { analyzeSource, escape, TooCostly, type FileAnalysis, type Finding } from './analyze-file';
import { allMatches, ledBy, newlineStarts, ownText } from './line-matches';
import { callNameWords, ruleMsg, type Rule } from './rules';

const prefilters = new WeakMap<Rule[], RegExp>();
const CUDA_ISH = /cuda|cudnn|nccl|nvtx/i;

/**
 * The words a file must contain for any rule to match it, derived from the rules: a rule's dotted
 * name can only match where its segments are written (at the use or in the import that binds the
 * alias), so one of them is enough — the library's name, or under torch the most telling one;
 * keyword, method and attribute
 * names; imported modules; the literal part of string patterns. A file with none is not parsed.
 */
export function prefilter(rules: Rule[]): RegExp {
  const hit = prefilters.get(rules);
  if (hit) return hit;
  const words = new Set<string>();
  const longest = (parts: string[]) => parts.reduce((a, b) => (b.length > a.length ? b : a), '');
  for (const r of rules) {
    const m = r.match;
    if (m.kind === 'call' && m.words) for (const w of m.words) words.add(w);
    else if (m.kind === 'reference' || m.kind === 'call')
      for (const name of m.names) {
        const [root, ...rest] = name.split('.').filter((seg) => seg !== '*');
        // a library's name is in its import; under torch, a CUDA-ish segment, else the longest
        if (root !== 'torch') words.add(root!);
        else words.add(rest.find((seg) => CUDA_ISH.test(seg)) ?? longest(rest));
      }
    else if (m.kind === 'import') for (const mod of m.modules) words.add(mod.split('.')[0]!);
    else if (m.kind === 'imported-name') for (const w of m.words) words.add(w);
    else if (m.kind === 'method')
      for (const w of m.firstArgIdentifier ?? [m.name])
        words.add(w === '0' ? `${m.name}(0` : w.replace(/\(\)$/, ''));
    else if (m.kind === 'keyword' || m.kind === 'attribute') words.add(m.name);
    else if (m.kind === 'extension') {
      // an extension is bound by importing a name like _C / _ext / *_cuda, or by a loader call
      for (const w of ['_C', '_ext', '_cuda', ...(m.names ?? [])]) words.add(w);
      // and the pattern's plain names (`voxel_layer`, `gpu_nms`)
      for (const w of m.modules.match(/(?<=[|:])[A-Za-z]\w+(?=[|)])/g) ?? []) words.add(w);
      for (const l of m.loaders)
        words.add(l.split('.').pop() === 'load' ? 'cpp_extension' : l.split('.').pop()!);
    } else if (m.kind === 'condition-name') for (const w of ['nccl', 'NCCL', 'Nccl']) words.add(w);
    else if (m.kind === 'definition')
      for (const w of m.regex.match(/[A-Za-z_]\w{2,}/g) ?? []) words.add(w);
    else if (m.kind === 'call-name') for (const w of callNameWords(m)) words.add(w);
    else if (m.kind === 'string') {
      // the literal text of the pattern, without classes and escapes
      const literal = m.regex.replace(/\[[^\]]*\]/g, ' ').replace(/\\./g, ' ');
      words.add(longest(literal.match(/[A-Za-z_][\w-]{2,}/g) ?? []));
    }
  }
  words.delete('');
  const re = new RegExp([...words].map(escape).join('|'));
  prefilters.set(rules, re);
  return re;
}

const DEVICE_CATEGORIES = new Set(['device', 'cuda-api', 'amp', 'distributed']);
/** The rules whose replacement is torch_npu's though they edit nothing (Rule.torchNpuFix). */
const torchNpuFixes = new WeakMap<Rule[], Set<string>>();
/**
 * A finding about the device, one whose edit writes torch_npu, or one whose rule's fix is
 * torch_npu's (the patch must import it).
 */
function usesDevice(rules: Rule[]): (f: Finding) => boolean {
  let fixes = torchNpuFixes.get(rules);
  if (!fixes)
    torchNpuFixes.set(
      rules,
      (fixes = new Set(rules.filter((r) => r.torchNpuFix).map((r) => r.id))),
    );
  return (f) =>
    DEVICE_CATEGORIES.has(f.category) ||
    fixes.has(f.ruleId) ||
    !!f.fix?.edits.some((e) => e.text.includes('torch_npu'));
}

/** Why a file was skipped: a text file has no NUL bytes. */
export const NOT_TEXT = 'not a text file (NUL bytes)';

/**
 * How long one file's analysis may take, in milliseconds: far past what any real source file
 * needs (the largest of the development corpus, 116 kB, takes ~50 ms here; it gets 1.5 s), so only broken or
 * generated text that tree-sitter's error recovery makes quadratic reaches it.
 */
export function fileBudgetMs(chars: number): number {
  return 1000 + Math.ceil(chars / 1024) * 4;
}

export interface PythonSource {
  text: string;
  kind: 'python';
  entryPoint: boolean;
  importsTorch: boolean;
  /** Where `import torch_npu` goes: see FileAnalysis. */
  importEnd: number;
}

export type PythonResult =
  | {
      rel: string;
      lines: number;
      parseErrors: boolean;
      findings: Finding[];
      backendSwitch?: FileAnalysis['backendSwitch'];
      /** The modules it imports, where a finding depends on them too (FileAnalysis.imports). */
      imports?: string[];
      /** Kept (when sources are kept) for files with findings or entry points: fixes need it. */
      source?: PythonSource;
      /** An entry point without findings: what it gets if the project needs porting. */
      entryAdditions?: Finding[];
      /**
       * The top-level modules it imports, when none is torch or on its own path: the additions
       * hold only if one of them is the project's own (a folder or module the scan lists).
       */
      entryNeeds?: string[];
    }
  /** Not read: the system's reason. */
  | { rel: string; error: string }
  /** Given up after this many milliseconds (fileBudgetMs): neither its lines nor findings count. */
  | { rel: string; tooCostly: number }
  /** The analysis failed on it (its message): neither its lines nor findings count. */
  | { rel: string; failed: string }
  /** Not analysed: not text (NUL bytes), so neither its lines nor its findings count. */
  | { rel: string; skipped: string };

/** Reads and analyses one Python file, including what must be ADDED to it. */
export function analyzePythonFile(
  parser: Parser,
  abs: string,
  rel: string,
  rules: Rule[],
  lang: Language,
  /** Keep the text of files with findings (fixes, review); without, only entry points keep it. */
  keepSources = true,
  /** The analysis's time limit in milliseconds; by default fileBudgetMs of the file's size. */
  budgetMs?: number,
): PythonResult {
  let raw: string;
  try {
    raw = readFileSync(abs, 'utf8');
  } catch (err) {
    return { rel, error: (err as Error).message };
  }
  if (raw.includes('\0')) return { rel, skipped: NOT_TEXT };
  // A UTF-8 byte-order mark (editors on Windows write one) hid the first line from every search
  // that starts a line, `import torch` first of all: the text is read without it, and what
  // is found is placed back in the file as it is (bomShifted)
  const bom = raw.charCodeAt(0) === 0xfeff;
  const src = bom ? raw.slice(1) : raw;
  // as `wc -l` counts, plus a last line without its newline
  const lines = src.length ? newlineStarts(src).length - (src.endsWith('\n') ? 1 : 0) : 0;
  // entry points are analysed even without CUDA words: a project that needs porting adds
  // torch_npu to them — a `__main__` guard's, and a script's that reads its arguments at the
  // top level (`args = parser.parse_args()` with no guard: run, never imported)
  const script = src.includes('parse_args(') && TOP_LEVEL_ARGS.test(src);
  if (
    !prefilter(rules).test(src) &&
    !(src.includes('__main__') && src.includes('__name__')) &&
    !script
  )
    return { rel, lines, parseErrors: false, findings: [] };
  const budget = budgetMs ?? fileBudgetMs(src.length);
  let result: FileAnalysis;
  try {
    result = analyzeSource(parser, src, rel, rules, lang, false, performance.now() + budget);
  } catch (err) {
    if (err instanceof TooCostly) return { rel, tooCostly: budget };
    // a fault of the analysis on one file's text (a case no test has met) costs that file, not
    // the scan of the whole tree
    return { rel, failed: err instanceof Error ? err.message : String(err) };
  }
  const findings = result.findings;
  const source =
    keepSources && (findings.length || result.entryPoint || script)
      ? {
          text: raw,
          kind: 'python' as const,
          entryPoint: result.entryPoint || script,
          importsTorch: result.importsTorch,
          importEnd: result.importEnd + (bom && result.importEnd >= 0 ? 1 : 0),
        }
      : undefined;
  // torch_npu is imported where the file uses the device (torch.npu, "npu", HCCL, NPU autocast)
  // or starts the program; advice about kernels and ops alone names the torch_npu op to use
  const device = usesDevice(rules);
  // a script that never imports torch itself but moves a model to a device it names (SAM's
  // amg.py: `--device cuda`, then `sam.to(device=args.device)`) or calls `.cuda()` is where the
  // program starts, so torch_npu is imported there; other libraries' devices (XGBoost, Warp,
  // CTranslate2) are not
  if (
    result.importsTorch
      ? result.entryPoint
        ? findings.length
        : findings.some(device)
      : findings.some(
          (f) =>
            // `.cuda()` is torch's method (LPIPS's scripts: `loss_fn.cuda()`, `img0.cuda()`)
            f.ruleId === 'device.cuda-method' ||
            (f.ruleId === 'device.cuda-string' && /\.to\((?:device=)?[\w.]*device\b/.test(src)),
        ) &&
        (result.entryPoint || script)
  )
    findings.push(...additions(src, rel, result, rules, lang));
  if (result.entryPoint && findings.some(device)) {
    const select = selectDevice(src, rel, rules, lang);
    if (select) findings.push(select);
  }
  // stable: at one place the additions keep their order (the import before the compile mode)
  findings.sort((a, b) => a.line - b.line || a.column - b.column);
  // an entry point without findings of its own gets torch_npu when the project needs porting,
  // which only the whole scan knows: what it would add is decided now, while its text is here
  const entry =
    (result.entryPoint || script) && !findings.length
      ? entryPointAdditions(
          src,
          rel,
          { importEnd: result.importEnd, entryPoint: true },
          rules,
          lang,
        )
      : null;
  const entryAdditions = entry?.findings ?? [];
  if (bom) for (const f of [...findings, ...entryAdditions]) bomShifted(f);
  return {
    rel,
    lines,
    parseErrors: result.parseErrors,
    // unpinned: texts cut from the source (a node's text, a message's values) are slices that
    // would keep the whole file alive as long as the finding lives — every file of the tree
    findings: source ? findings : unpinned(findings),
    ...(source ? { source } : {}),
    ...(entryAdditions.length ? { entryAdditions: unpinned(entryAdditions) } : {}),
    ...(entryAdditions.length && entry?.needs ? { entryNeeds: entry.needs } : {}),
    ...(result.backendSwitch ? { backendSwitch: result.backendSwitch } : {}),
    ...(result.imports ? { imports: result.imports } : {}),
  };
}

/**
 * A finding made on the text without its byte-order mark, placed in the file as it is: its edits
 * (offsets into the text kept for fixes) one character later. Lines and columns stay as editors
 * show them, which do not count the mark.
 */
export function bomShifted(f: Finding): void {
  for (const e of f.fix?.edits ?? []) {
    e.start++;
    e.end++;
  }
}

/** A finding's fields that never hold the file's text: its rule's strings, the path, the message. */
const OWN_TEXT = new Set(['ruleId', 'file', 'severity', 'category', 'message']);

/**
 * The findings, their strings cut from the file made anew, in place. A string V8 cut from a
 * longer one (13 characters or more) is a view that keeps the whole text alive; what may be one
 * (an edit's text, a message's parameters: a node's text) is rewritten from a one-character-
 * longer string V8 has to write out. The rule's strings and the message (built by a replace, so
 * already a copy) are left as they are. structuredClone did this by serialising every finding
 * and reading it back: three times the CPU.
 */
export function unpinned(findings: Finding[]): Finding[] {
  for (const finding of findings) {
    const f = finding as unknown as Record<string, unknown>;
    for (const key in f) if (!OWN_TEXT.has(key)) f[key] = unpin(f[key]);
  }
  return findings;
}

function unpin(value: unknown): unknown {
  if (typeof value === 'string') return ownText(value);
  if (typeof value !== 'object' || value === null) return value;
  const o = value as Record<string, unknown>;
  if (Array.isArray(o)) for (let i = 0; i < o.length; i++) o[i] = unpin(o[i]);
  else for (const key in o) o[key] = unpin(o[key]);
  return o;
}

export const TOP_IMPORT = ledBy(/^(?:from|import)\s+([A-Za-z_]\w*)/gm, ['from', 'import'], false);

/**
 * At an entry point that imports torch or the project's own package (a folder on its own path,
 * or a relative import): `import torch_npu` and the compile mode, if the project needs porting.
 * Importing other top-level modules (`from src.solver import TASKS` beside `src/`) the additions
 * wait for the scan to say whether one of them is the project's (`needs`).
 */
function entryPointAdditions(
  src: string,
  rel: string,
  at: Pick<FileAnalysis, 'importEnd' | 'entryPoint'>,
  rules: Rule[],
  lang: Language,
): { findings: Finding[]; needs?: string[] } | null {
  const dirs = new Set(rel.split('/').slice(0, -1));
  const names = allMatches(TOP_IMPORT, src).map((m) => m[1]!);
  const own = names.some((n) => dirs.has(n) || n === 'torch') || /^from\s+\./m.test(src);
  if (!own && !names.length) return null;
  const findings = additions(src, rel, at, rules, lang);
  return own ? { findings } : { findings, needs: [...new Set(names)] };
}

/** Launchers and trainers that pick each process's device themselves. */
const PICKS_DEVICE =
  /^\s*(?:from|import)\s+(?:accelerate|lightning|pytorch_lightning|deepspeed|transformers|mmengine|colossalai)\b/m;

/**
 * An entry point that uses a device but never selects one: no set_device, no
 * init_process_group (add.set-device covers that), no launcher that picks it. The process's NPU
 * is chosen right after the arguments are parsed (torch_npu runs ops on the current device).
 */
function selectDevice(src: string, rel: string, rules: Rule[], lang: Language): Finding | null {
  // each literal looked for first: a regex led by `\b` or `^` tries every offset of the file
  if (
    (src.includes('set_device') && /\bset_device\s*\(/.test(src)) ||
    src.includes('init_process_group') ||
    (src.includes('LOCAL_RANK') && /\bLOCAL_RANK\b/.test(src)) ||
    PICKS_DEVICE.test(src)
  )
    return null;
  const m = src.includes('.parse_')
    ? /^([ \t]*)[\w.]+\s*(?:,\s*[\w.]+\s*)*=\s*[\w.]+\.parse_\w*args\w*\(.*$/m.exec(src)
    : null;
  if (!m) return null;
  const r = rules.find((x) => x.id === 'add.select-device');
  if (!r) return null;
  let line = 1;
  for (let i = src.indexOf('\n'); i >= 0 && i < m.index; i = src.indexOf('\n', i + 1)) line++;
  return {
    ruleId: r.id,
    file: rel,
    line,
    column: m[1]!.length + 1,
    endLine: line,
    endColumn: m[0].length + 1,
    severity: r.severity,
    category: r.category,
    message: r.message[lang],
    ...(r.fix ? { fix: { description: r.fix[lang], edits: [] } } : {}),
    text: { message: ruleMsg(r.id, 'message'), ...(r.fix ? { fix: ruleMsg(r.id, 'fix') } : {}) },
  };
}

/** `opt = parser.parse_args()` at the top level: a script, guarded by no `__main__` test. */
const TOP_LEVEL_ARGS = /^\w+[ \t]*=[ \t]*[\w.]*\.parse_args\(/m;

/** `import torch.cuda` on its own line, at the top level. */
const TORCH_CUDA_IMPORT = /^import torch\.cuda[ \t]*$/m;

/**
 * What must be added to a file that runs on the NPU: `import torch_npu` after its leading imports,
 * and at an entry point the compile mode right after it.
 */
export function additions(
  src: string,
  rel: string,
  at: Pick<FileAnalysis, 'importEnd' | 'entryPoint'>,
  rules: Rule[],
  lang: Language,
): Finding[] {
  // the substring test first: the multiline regex alone runs at every offset of the file
  if (src.includes('torch_npu') && /^\s*(import torch_npu|from torch_npu)/m.test(src)) return [];
  const out: Finding[] = [];
  const lineOf = (offset: number) => {
    let n = 1;
    for (let i = src.indexOf('\n'); i >= 0 && i < offset; i = src.indexOf('\n', i + 1)) n++;
    return n;
  };
  const push = (id: string, offset: number, edit: { at: number; text: string }) => {
    const r = rules.find((x) => x.id === id)!;
    const line = lineOf(offset);
    const lineStart = src.lastIndexOf('\n', offset - 1) + 1;
    const lineEnd = src.indexOf('\n', offset);
    out.push({
      ruleId: id,
      file: rel,
      line,
      column: 1,
      endLine: line,
      endColumn: (lineEnd < 0 ? src.length : lineEnd) - lineStart + 1,
      severity: r.severity,
      category: r.category,
      message: r.message[lang],
      fix: {
        description: r.fix?.[lang] ?? '',
        edits: [{ start: edit.at, end: edit.at, text: edit.text }],
      },
      text: { message: ruleMsg(id, 'message'), ...(r.fix ? { fix: ruleMsg(id, 'fix') } : {}) },
    });
  };
  // after the leading imports, where porters put it: every module that uses the device gets
  // its own import, so the order among the project's imports does not matter
  // a leading `import torch.cuda` is where it goes instead: the port turns that line into it
  const cudaImport = src.includes('import torch.cuda') ? TORCH_CUDA_IMPORT.exec(src) : null;
  if (cudaImport && cudaImport.index < at.importEnd) {
    const end = cudaImport.index + cudaImport[0].length;
    push('add.import-torch-npu', cudaImport.index, { at: end, text: '\nimport torch_npu' });
  } else if (at.importEnd >= 0)
    // the line of the block's last import (a parenthesised import: where it closes)
    push('add.import-torch-npu', Math.max(0, at.importEnd - 1), {
      at: at.importEnd,
      text: '\nimport torch_npu',
    });
  else {
    const m = /^import torch\b.*$/m.exec(src) ?? /^from torch\b.*$/m.exec(src);
    if (!m) return out;
    push('add.import-torch-npu', m.index, {
      at: m.index + m[0].length,
      text: '\nimport torch_npu',
    });
  }
  // at an entry point the compile mode right below the import (same offset, later edit)
  if (at.entryPoint && out.length && !/set_compile_mode/.test(src)) {
    const imp = out[0]!;
    const edit = imp.fix!.edits[0]!;
    out.push({
      ...imp,
      ruleId: 'add.compile-mode',
      severity: rules.find((x) => x.id === 'add.compile-mode')!.severity,
      category: rules.find((x) => x.id === 'add.compile-mode')!.category,
      message: rules.find((x) => x.id === 'add.compile-mode')!.message[lang],
      text: {
        message: ruleMsg('add.compile-mode', 'message'),
        fix: ruleMsg('add.compile-mode', 'fix'),
      },
      fix: {
        description: rules.find((x) => x.id === 'add.compile-mode')!.fix?.[lang] ?? '',
        edits: [
          {
            start: edit.start,
            end: edit.end,
            text: '\ntorch_npu.npu.set_compile_mode(jit_compile=False)',
          },
        ],
      },
    });
  }
  return out;
}
