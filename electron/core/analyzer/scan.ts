import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Language } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { analyzeSource, type Edit, type Finding } from './analyze-file';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';

export interface Effort {
  level: 'low' | 'medium' | 'high';
  /** The seeds' four dimensions, each with the counts behind it. */
  dimensions: { device: number; thirdParty: number; mixedPrecision: number; multiCard: number };
  notes: string[];
}

export interface ScanResult {
  root: string;
  files: number;
  lines: number;
  findings: Finding[];
  effort: Effort;
  /** Files that could not be read or parsed cleanly (findings there may be incomplete). */
  warnings: string[];
  /** Per file: the original text and whether it is an entry point, for fixes. */
  sources: Map<string, { text: string; entryPoint: boolean; importsTorch: boolean }>;
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
/**
 * A file that mentions none of these cannot match any rule: skip parsing it. (Plain `torch` is
 * not enough: model code that only imports torch has nothing to migrate.)
 */
const PREFILTER =
  /cuda|nccl|NCCL_|apex|flash_attn|xformers|triton|transformer_engine|deepspeed|bitsandbytes|fbgemm|torchrec|cupy|vllm|colossalai|megatron|pynvml|nvtx|cudnn|cpp_extension|device_ids|map_location|pin_memory|fused|compile|jit|autocast/;
const REQUIREMENT_LIBS: Record<string, string> = {
  'flash-attn': 'lib.flash-attn',
  flash_attn: 'lib.flash-attn',
  xformers: 'lib.xformers',
  triton: 'lib.triton',
  'transformer-engine': 'lib.transformer-engine',
  transformer_engine: 'lib.transformer-engine',
  deepspeed: 'lib.deepspeed',
  bitsandbytes: 'lib.bitsandbytes',
  'fbgemm-gpu': 'lib.fbgemm-gpu',
  fbgemm_gpu: 'lib.fbgemm-gpu',
  torchrec: 'lib.torchrec',
  cupy: 'lib.cupy',
  vllm: 'lib.vllm',
  colossalai: 'lib.colossalai',
  apex: 'amp.apex',
  pynvml: 'lib.pynvml',
  'nvidia-ml-py': 'lib.pynvml',
};

/** Files git would commit (honours .gitignore); a plain walk where the folder is no git checkout. */
function listFiles(root: string, exclude: RegExp[]): string[] {
  let files: string[];
  try {
    files = execFileSync('git', ['-C', root, 'ls-files', '-co', '--exclude-standard', '-z'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 256 * 1024 * 1024,
    })
      .split('\0')
      .filter(Boolean)
      .map((f) => join(root, f));
  } catch {
    files = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) {
          if (!SKIP_DIRS.has(entry.name)) walk(join(dir, entry.name));
        } else if (entry.isFile()) files.push(join(dir, entry.name));
      }
    };
    walk(root);
  }
  return files.filter(
    (f) => existsSync(f) && !exclude.some((re) => re.test(relative(root, f).split(sep).join('/'))),
  );
}

/** `--exclude` globs: `*` within a path segment, `**` across segments; a folder excludes its contents. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('**')
      .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
      .join('.*')}(/.*)?$`,
  );

export async function scanProject(
  root: string,
  opts: { exclude?: string[]; lang?: Language } = {},
): Promise<ScanResult> {
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new AmwError('NOT_FOUND', `${root} is not a folder.`, { root });
  }
  const lang = opts.lang ?? 'en';
  const rules = loadRules();
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  const parser = await pythonParser();
  const files = listFiles(root, (opts.exclude ?? []).map(glob));
  const findings: Finding[] = [];
  const warnings: string[] = [];
  const sources = new Map<string, { text: string; entryPoint: boolean; importsTorch: boolean }>();
  let lines = 0;
  let pyFiles = 0;
  const finding = (
    ruleId: string,
    file: string,
    line: number,
    column: number,
    endColumn: number,
    message?: string,
    edits?: Edit[],
  ) => {
    const r = ruleById.get(ruleId)!;
    findings.push({
      ruleId,
      file,
      line,
      column,
      endLine: line,
      endColumn,
      severity: r.severity,
      category: r.category,
      message: message ?? r.message[lang].replace(/\{\{\w+\}\}/g, ''),
      ...(r.fix || edits ? { fix: { description: r.fix?.[lang] ?? '', edits: edits ?? [] } } : {}),
    });
  };

  for (const abs of files) {
    const rel = relative(root, abs).split(sep).join('/');
    if (/\.(cu|cuh)$/.test(rel)) {
      finding(
        'ext.cuda-extension',
        rel,
        1,
        1,
        1,
        lang === 'en'
          ? `${rel} is CUDA C++ source: it has to be ported.`
          : `${rel} 是 CUDA C++ 源码，需要移植。`,
      );
      continue;
    }
    if (/(^|\/)requirements[^/]*\.txt$/.test(rel)) {
      readFileSync(abs, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          const name = /^\s*([A-Za-z0-9_.-]+)/.exec(text)?.[1]?.toLowerCase();
          const ruleId = name ? REQUIREMENT_LIBS[name] : undefined;
          if (ruleId) finding(ruleId, rel, i + 1, 1, text.length + 1);
        });
      continue;
    }
    if (!rel.endsWith('.py')) continue;
    let text: string;
    try {
      text = readFileSync(abs, 'utf8');
    } catch (err) {
      warnings.push(`${rel}: ${(err as Error).message}`);
      continue;
    }
    pyFiles++;
    lines += text.length ? text.split('\n').length : 0;
    if (!PREFILTER.test(text)) continue;
    const result = analyzeSource(parser, text, rel, rules, lang);
    if (result.parseErrors)
      warnings.push(`${rel}: Python syntax errors; findings there may be incomplete`);
    sources.set(rel, { text, entryPoint: result.entryPoint, importsTorch: result.importsTorch });
    findings.push(...result.findings);
    // what must be ADDED: import torch_npu where torch is used for the device
    if (
      result.importsTorch &&
      result.findings.length &&
      !/^\s*(import torch_npu|from torch_npu)/m.test(text)
    ) {
      const m = /^([ \t]*)import torch\b.*$/m.exec(text) ?? /^([ \t]*)from torch\b.*$/m.exec(text);
      if (m) {
        const at = m.index + m[0].length;
        const line = text.slice(0, m.index).split('\n').length;
        findings.push({
          ruleId: 'add.import-torch-npu',
          file: rel,
          line,
          column: 1,
          endLine: line,
          endColumn: m[0].length + 1,
          severity: 'error',
          category: 'add',
          message:
            lang === 'en'
              ? 'Add `import torch_npu` after `import torch`: it registers the NPU device and torch.npu.'
              : '在 `import torch` 之后加入 `import torch_npu`：它注册 NPU 设备和 torch.npu。',
          fix: {
            description: 'import torch_npu',
            edits: [{ start: at, end: at, text: `\n${m[1]}import torch_npu` }],
          },
        });
      }
    }
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  return {
    root,
    files: pyFiles,
    lines,
    findings,
    effort: estimateEffort(findings),
    warnings,
    sources,
  };
}

/** Seed 000's four dimensions of migration work, weighted by what each costs to port. */
export function estimateEffort(findings: Finding[]): Effort {
  const count = (cats: string[]) => findings.filter((f) => cats.includes(f.category)).length;
  const d = {
    device: count(['device', 'cuda-api', 'add']),
    thirdParty: count(['third-party', 'extension', 'optimizer']),
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
