import { readFileSync } from 'node:fs';
import type { Parser } from 'web-tree-sitter';
import type { Language } from '../../../shared/api';
import { analyzeSource, type Finding } from './analyze-file';
import type { Rule } from './rules';

/**
 * A file that mentions none of these cannot match any rule: skip parsing it. (Plain `torch` is
 * not enough: model code that only imports torch has nothing to migrate.)
 */
const PREFILTER =
  /cuda|CUDA|nccl|NCCL|apex|amp_C|syncbn|DataParallel|profiler|flash_attention_2|flash_attn|xformers|triton|transformer_engine|deepspeed|bitsandbytes|fbgemm|torchrec|cupy|vllm|colossalai|megatron|pynvml|nvtx|nvidia-smi|cpp_extension|device_ids|map_location|pin_memory|fused|compile|jit|autocast|scaled_dot_product_attention|init_process_group/;

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
  if (!PREFILTER.test(src)) return { rel, lines, parseErrors: false, findings: [] };
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
