import { readFileSync } from 'node:fs';
import type { Parser } from 'web-tree-sitter';
import type { Language } from '../../../shared/api';
import { analyzeSource, type Finding } from './analyze-file';
import type { Rule } from './rules';

const prefilters = new WeakMap<Rule[], RegExp>();
const CUDA_ISH = /cuda|cudnn|nccl|nvtx/i;
const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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
    if (m.kind === 'reference' || m.kind === 'call')
      for (const name of m.names) {
        const [root, ...rest] = name.split('.').filter((seg) => seg !== '*');
        // a library's name is in its import; under torch, a CUDA-ish segment, else the longest
        if (root !== 'torch') words.add(root!);
        else words.add(rest.find((seg) => CUDA_ISH.test(seg)) ?? longest(rest));
      }
    else if (m.kind === 'import') for (const mod of m.modules) words.add(mod.split('.')[0]!);
    else if (m.kind === 'method') for (const w of m.firstArgIdentifier ?? [m.name]) words.add(w);
    else if (m.kind === 'keyword' || m.kind === 'attribute') words.add(m.name);
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

export interface PythonSource {
  text: string;
  kind: 'python';
  entryPoint: boolean;
  importsTorch: boolean;
}

export type PythonResult =
  | {
      rel: string;
      lines: number;
      parseErrors: boolean;
      findings: Finding[];
      /** Kept only for files with findings or entry points: the fixes need the text. */
      source?: PythonSource;
    }
  | { rel: string; error: string };

/** Reads and analyses one Python file, including what must be ADDED to it. */
export function analyzePythonFile(
  parser: Parser,
  abs: string,
  rel: string,
  rules: Rule[],
  lang: Language,
): PythonResult {
  let src: string;
  try {
    src = readFileSync(abs, 'utf8');
  } catch (err) {
    return { rel, error: `${rel}: ${(err as Error).message}` };
  }
  let lines = src.length ? 1 : 0;
  for (let i = src.indexOf('\n'); i >= 0; i = src.indexOf('\n', i + 1)) lines++;
  if (!prefilter(rules).test(src)) return { rel, lines, parseErrors: false, findings: [] };
  const result = analyzeSource(parser, src, rel, rules, lang);
  const findings = result.findings;
  const source =
    findings.length || result.entryPoint
      ? {
          text: src,
          kind: 'python' as const,
          entryPoint: result.entryPoint,
          importsTorch: result.importsTorch,
        }
      : undefined;
  const m =
    result.importsTorch && findings.length && !/^\s*(import torch_npu|from torch_npu)/m.test(src)
      ? (/^([ \t]*)import torch\b.*$/m.exec(src) ?? /^([ \t]*)from torch\b.*$/m.exec(src))
      : null;
  if (m) {
    const at = m.index + m[0].length;
    const line = src.slice(0, m.index).split('\n').length;
    const add = (id: string, text: string) => {
      const r = rules.find((x) => x.id === id)!;
      findings.push({
        ruleId: id,
        file: rel,
        line,
        column: 1,
        endLine: line,
        endColumn: m[0].length + 1,
        severity: r.severity,
        category: r.category,
        message: r.message[lang],
        fix: { description: r.fix?.[lang] ?? '', edits: [{ start: at, end: at, text }] },
      });
    };
    // import torch_npu where torch is used for the device; at an entry point the compile mode
    // right after it (same offset, later edit, so it lands below the import)
    add('add.import-torch-npu', `\n${m[1]}import torch_npu`);
    if (result.entryPoint && !/set_compile_mode/.test(src))
      add('add.compile-mode', `\n${m[1]}torch_npu.npu.set_compile_mode(jit_compile=False)`);
  }
  return { rel, lines, parseErrors: result.parseErrors, findings, ...(source ? { source } : {}) };
}
