import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type {
  DtypePolicy,
  ModuleCompare,
  PrecisionCompareResult,
  RawModuleRecord,
  TensorStats,
} from '../../../../shared/stages/precision/api';
import type { Msg } from '../../../../shared/api/text';
import { msg } from '../../../../shared/api/text';
import { readSheet } from 'read-excel-file/node';
import { compareDumps, firstDivergence } from './compare';

/**
 * msprobe's files (knowledge ascend-profiling-precision.md §4): dump folders (step/rank layout,
 * dump.json with stack.json and construct.json beside it, PyTorch and MindSpore), compare_result
 * csv of every version (keyed by column name), config.json. What cannot be read becomes a
 * problem naming the file, entry or column; what could be read is kept.
 */
export interface MsprobeImport extends PrecisionCompareResult {
  files: string[];
  problems: Msg[];
  config: {
    task: string | null;
    level: string | null;
    seed: number | null;
    deterministic: boolean | null;
  } | null;
  framework: string | null;
}

const m = (key: string, params?: Parameters<typeof msg>[1]) =>
  msg(`stage-precision:${key}`, params);

// ---- dump.json --------------------------------------------------------------------------------

interface DumpItem {
  type?: string;
  dtype?: string;
  shape?: number[];
  Max?: number | string | boolean | null;
  Min?: number | string | boolean | null;
  Mean?: number | string | null;
  Norm?: number | string | null;
  md5?: string;
}

const num = (x: unknown): number | null => {
  // a bool tensor's Max/Min are written as true/false (msprobe keeps the tensor's own type)
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'number') return Number.isFinite(x) ? x : null;
  if (typeof x === 'string' && x.trim() !== '' && Number.isFinite(Number(x))) return Number(x);
  return null;
};
const nonFinite = (x: unknown) =>
  typeof x === 'string' && /^\s*-?(inf|nan)/i.test(x)
    ? /nan/i.test(x)
      ? 'nan'
      : 'inf'
    : typeof x === 'number' && !Number.isFinite(x)
      ? Number.isNaN(x)
        ? 'nan'
        : 'inf'
      : null;

function itemStats(it: DumpItem): TensorStats {
  const flags = [it.Max, it.Min, it.Mean, it.Norm].map(nonFinite);
  const shape = Array.isArray(it.shape) ? it.shape : [];
  return {
    dtype: String(it.dtype ?? '')
      .replace(/^torch\./, '')
      .toLowerCase(),
    shape,
    max: num(it.Max),
    min: num(it.Min),
    mean: num(it.Mean),
    norm: num(it.Norm),
    nan: flags.includes('nan') ? 1 : 0,
    inf: flags.includes('inf') ? 1 : 0,
    numel: shape.reduce((a, b) => a * b, 1),
    ...(typeof it.md5 === 'string' && it.md5 ? { md5: it.md5 } : {}),
  };
}

function tensorsIn(x: unknown, out: TensorStats[]): TensorStats[] {
  if (Array.isArray(x)) for (const y of x) tensorsIn(y, out);
  else if (x && typeof x === 'object') {
    const it = x as DumpItem;
    if (typeof it.type === 'string' && /Tensor$/.test(it.type)) out.push(itemStats(it));
    else if (!('type' in it)) for (const v of Object.values(x)) tensorsIn(v, out);
  }
  return out;
}

/** Class of a dump name: Module.conv1.Conv2d.forward.0 → Conv2d; Functional.conv2d.0.forward → Functional.conv2d. */
function nameParts(name: string): { cls: string; kind: 'forward' | 'grad' } {
  const parts = name.split('.');
  if (parts[0] === 'Module' || parts[0] === 'Cell') {
    const at = parts.findIndex(
      (p) => p === 'forward' || p === 'backward' || p === 'parameters_grad',
    );
    return {
      cls: at > 1 ? parts[at - 1]! : parts[0]!,
      kind: parts[at] === 'forward' ? 'forward' : 'grad',
    };
  }
  // an API's backward entry holds the gradients of its inputs
  return {
    cls: parts.slice(0, 2).join('.'),
    kind: parts.includes('backward') ? 'grad' : 'forward',
  };
}

const FRAMEWORK_FRAMES = /\/(msprobe|torch|mindspore|site-packages|dist-packages)\//;

/** stack.json, both layouts: the first frame outside msprobe and the framework, as `file:line`. */
export function readStacks(text: string): Map<string, string> {
  const doc = JSON.parse(text) as Record<string, unknown>;
  const out = new Map<string, string>();
  const first = (lines: unknown): string | null => {
    if (!Array.isArray(lines)) return null;
    for (const l of lines) {
      const mm = /File (.+?), line (\d+)/.exec(String(l));
      if (mm && !FRAMEWORK_FRAMES.test(mm[1]!)) return `${mm[1]}:${mm[2]}`;
    }
    return null;
  };
  for (const [k, v] of Object.entries(doc)) {
    if (/^\d+$/.test(k) && Array.isArray(v) && Array.isArray(v[0])) {
      const at = first(v[1]);
      if (at) for (const name of v[0] as unknown[]) out.set(String(name), at);
    } else {
      const at = first(v);
      if (at) out.set(k, at);
    }
  }
  return out;
}

/**
 * A dump.json's entries as module records, in file order (msprobe writes them as they run). A
 * truncated file keeps the entries before the damage.
 */
export function readDumpJson(
  text: string,
  file: string,
  problems: Msg[],
  stacks = new Map<string, string>(),
): {
  records: RawModuleRecord[];
  task: string | null;
  framework: string | null;
  level: string | null;
} {
  let doc: { task?: string; framework?: string; level?: string; data?: Record<string, unknown> };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch (e) {
    problems.push(m('import.truncated', { file, error: (e as Error).message.slice(0, 120) }));
    doc = salvageDump(text);
  }
  const records: RawModuleRecord[] = [];
  const calls = new Map<string, number>();
  for (const [name, entry] of Object.entries(doc.data ?? {})) {
    if (!entry || typeof entry !== 'object') {
      problems.push(m('import.badEntry', { file, name }));
      continue;
    }
    const e = entry as Record<string, unknown>;
    const { cls, kind } = nameParts(name);
    // parameters_grad entries are {weight: [...]}: the whole entry; others their output
    const outputs = tensorsIn(e.output ?? e, []);
    const n = calls.get(name) ?? 0;
    calls.set(name, n + 1);
    records.push({
      module: name,
      call: n,
      cls,
      order: records.length,
      classSource: null,
      callSite: stacks.get(name) ?? null,
      outputs,
      kind,
    });
  }
  return {
    records,
    task: doc.task ?? null,
    framework: doc.framework ?? null,
    level: doc.level ?? null,
  };
}

/** The complete entries of a cut-off dump.json: each top-level `"name": {...}` of `data` that parses. */
function salvageDump(text: string): {
  task?: string;
  framework?: string;
  data: Record<string, unknown>;
} {
  const data: Record<string, unknown> = {};
  const head = /"task"\s*:\s*"([^"]*)"/.exec(text)?.[1];
  const fw = /"framework"\s*:\s*"([^"]*)"/.exec(text)?.[1];
  const start = text.indexOf('"data"');
  if (start < 0) return { task: head, framework: fw, data };
  let i = text.indexOf('{', start) + 1;
  while (i > 0 && i < text.length) {
    const keyAt = text.indexOf('"', i);
    if (keyAt < 0) break;
    const keyEnd = text.indexOf('"', keyAt + 1);
    const open = text.indexOf('{', keyEnd);
    if (keyEnd < 0 || open < 0) break;
    // find the matching close brace (strings in dumps carry no braces that matter but skip them)
    let depth = 0;
    let j = open;
    let inStr = false;
    for (; j < text.length; j++) {
      const c = text[j];
      if (inStr) {
        if (c === '\\') j++;
        else if (c === '"') inStr = false;
      } else if (c === '"') inStr = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) break;
    }
    if (j >= text.length) break;
    try {
      data[JSON.parse(text.slice(keyAt, keyEnd + 1)) as string] = JSON.parse(
        text.slice(open, j + 1),
      );
    } catch {
      break;
    }
    i = j + 1;
  }
  return { task: head, framework: fw, data };
}

// ---- compare_result csv -----------------------------------------------------------------------

/** RFC 4180: quoted fields with commas, doubled quotes and newlines. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (q) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else q = false;
      } else field += c;
    } else if (c === '"') q = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.length > 1 || r[0] !== '');
}

/** Every column any msprobe / ptdbg_ascend version wrote (knowledge §4.5). */
export const KNOWN_COLUMNS = new Set([
  'NPU Name',
  'Bench Name',
  'NPU Dtype',
  'Bench Dtype',
  'NPU Tensor Dtype',
  'Bench Tensor Dtype',
  'NPU Tensor Shape',
  'Bench Tensor Shape',
  'NPU Requires_grad',
  'Bench Requires_grad',
  'Cosine',
  'EucDist',
  'MaxAbsErr',
  'MaxRelativeErr',
  'One Thousandth Err Ratio',
  'Five Thousandths Err Ratio',
  'Five Thousandth Err Ratio',
  'Max diff',
  'Min diff',
  'Mean diff',
  'L2norm diff',
  'MinRelativeErr',
  'MeanRelativeErr',
  'NormRelativeErr',
  'NPU max',
  'NPU min',
  'NPU mean',
  'NPU l2norm',
  'Bench max',
  'Bench min',
  'Bench mean',
  'Bench l2norm',
  'NPU MD5',
  'BENCH MD5',
  'Requires_grad Consistent',
  'Accuracy Reached or Not',
  'Result',
  'Err_message',
  'NPU_Stack_Info',
  'Data_name',
  'Dirty Valid Len',
]);

/** `12.5%` (statistics mode writes relative errors as percent strings) → 0.125; `N/A` → null. */
function metric(cell: string | undefined, percent = false): number | null {
  if (cell === undefined) return null;
  const s = cell.trim();
  if (s === '' || /^(N\/A|None|nan|inf|-inf|shape unmatched)$/i.test(s)) return null;
  const pct = s.endsWith('%');
  const v = Number(pct ? s.slice(0, -1) : s);
  if (!Number.isFinite(v)) return null;
  return pct || percent ? v / 100 : v;
}

function shapeOf(cell: string | undefined): number[] {
  return (cell ?? '').match(/\d+/g)?.map(Number) ?? [];
}

function verdict(row: Record<string, string>): ModuleCompare['result'] {
  const r = (row['Result'] ?? '').trim().toLowerCase();
  if (r === 'pass' || r === 'warning' || r === 'error') return r;
  if (r === 'different') return 'error';
  const acc = (row['Accuracy Reached or Not'] ?? '').trim().toLowerCase();
  if (acc === 'yes') return 'pass';
  if (acc === 'no' || acc === 'unmatched') return 'error';
  // statistics mode of msprobe 1.x: "warning" or empty (empty: nothing to report)
  if ('Result' in row && r === '') return 'pass';
  return 'none';
}

export function readCompareCsv(text: string, file: string, problems: Msg[]): ModuleCompare[] {
  return readCompareRows(parseCsv(text.replace(/^\uFEFF/, '')), file, problems);
}

/** A compare result's first sheet (msprobe writes xlsx), read by read-excel-file. */
export async function readCompareXlsx(
  data: Buffer,
  file: string,
  problems: Msg[],
): Promise<ModuleCompare[]> {
  let sheet: unknown[][];
  try {
    sheet = await readSheet(data);
  } catch (e) {
    problems.push(m('import.badXlsx', { file, error: (e as Error).message.slice(0, 160) }));
    return [];
  }
  const rows = sheet.map((r) =>
    r.map((v) =>
      v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v),
    ),
  );
  return readCompareRows(rows, file, problems);
}

/** Rows of a compare result (csv or xlsx), keyed by column name: every version's columns. */
export function readCompareRows(rows: string[][], file: string, problems: Msg[]): ModuleCompare[] {
  const header = (rows[0] ?? []).map((h) => h.trim());
  if (!header.includes('NPU Name')) {
    problems.push(
      m('import.noNameColumn', { file, columns: header.filter(Boolean).join(', ') || '-' }),
    );
    return [];
  }
  const unknown = header.filter((h) => h && !KNOWN_COLUMNS.has(h));
  if (unknown.length)
    problems.push(m('import.unknownColumns', { file, columns: unknown.join(', ') }));
  const out: ModuleCompare[] = [];
  rows.slice(1).forEach((cells, i) => {
    if (cells.length !== header.length)
      problems.push(
        m('import.badRow', { file, line: i + 2, count: cells.length, header: header.length }),
      );
    const row: Record<string, string> = {};
    header.forEach((h, k) => (row[h] = cells[k] ?? ''));
    const name = row['NPU Name']!;
    const stats = (side: 'NPU' | 'Bench'): TensorStats => {
      const dtype = (row[`${side} Dtype`] ?? row[`${side} Tensor Dtype`] ?? '').replace(
        /^torch\./,
        '',
      );
      const shape = shapeOf(row[`${side} Tensor Shape`]);
      return {
        dtype,
        shape,
        max: metric(row[`${side} max`]),
        min: metric(row[`${side} min`]),
        mean: metric(row[`${side} mean`]),
        norm: metric(row[`${side} l2norm`]),
        nan: /nan/i.test(`${row[`${side} max`]}${row[`${side} min`]}`) ? 1 : 0,
        inf: /inf/i.test(`${row[`${side} max`]}${row[`${side} min`]}`) ? 1 : 0,
        numel: shape.reduce((a, b) => a * b, 1),
      };
    };
    const result = verdict(row);
    let message = (row['Err_message'] ?? '').trim();
    if (message.startsWith('[')) {
      try {
        message = (JSON.parse(message) as string[]).join(' ');
      } catch {
        // kept as written
      }
    }
    const stack = row['NPU_Stack_Info']
      ? /File (.+?), line (\d+)/.exec(row['NPU_Stack_Info'])
      : null;
    const statsMode = 'Max diff' in row;
    out.push({
      module: name,
      order: out.length,
      cls: nameParts(name.replace(/_/g, '.')).cls,
      source: stack ? `${stack[1]}:${stack[2]}` : null,
      kind: /backward|grad/.test(name) ? 'grad' : 'forward',
      result,
      reason:
        result === 'pass' || result === 'none'
          ? null
          : // msprobe's own words, quoted: its result is the row's, shown in the reader's language
            {
              key: message ? 'reason.imported' : 'reason.importedBare',
              params: { result, message },
            },
      cosine: metric(row['Cosine']),
      maxAbsErr: metric(row['MaxAbsErr']),
      maxRelErr: metric(row['MaxRelativeErr'], false),
      meanRelErr: metric(row['MeanRelativeErr'], false),
      oneThousandthRatio: metric(row['One Thousandth Err Ratio']),
      fiveThousandthsRatio: metric(
        row['Five Thousandths Err Ratio'] ?? row['Five Thousandth Err Ratio'],
      ),
      statDrift: statsMode ? metric(row['NormRelativeErr']) : null,
      baseline: stats('Bench'),
      target: stats('NPU'),
    });
  });
  return out;
}

// ---- folders and files ------------------------------------------------------------------------

function walk(dir: string, out: string[] = [], depth = 0): string[] {
  if (depth > 6) return out;
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name, 'en', { numeric: true }),
  )) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out, depth + 1);
    else out.push(p);
  }
  return out;
}

const RELEVANT =
  /(^|\/)(dump\.json|stack\.json|construct\.json|config\.json)$|compare_result.*\.(csv|xlsx)$|\.xlsx$/;
const BENCH = /bench|gpu|golden|cuda|baseline/i;

/** A file or folder of msprobe output, read whole: one run's worth of module rows. */
export async function importMsprobe(path: string): Promise<MsprobeImport> {
  const problems: Msg[] = [];
  const root = statSync(path).isDirectory() ? path : dirname(path);
  const files = statSync(path).isDirectory() ? walk(path).filter((f) => RELEVANT.test(f)) : [path];
  const rel = (f: string) => relative(dirname(root), f) || basename(f);
  let modules: ModuleCompare[] = [];
  let config: MsprobeImport['config'] = null;
  let framework: string | null = null;
  const dumps: { file: string; records: RawModuleRecord[]; task: string | null }[] = [];
  const used: string[] = [];
  for (const f of files) {
    const name = basename(f);
    let text: string;
    let raw: Buffer;
    try {
      raw = readFileSync(f);
      text = raw.toString('utf8');
    } catch (e) {
      problems.push(
        m('import.missingFile', {
          dir: rel(dirname(f)),
          file: `${name} (${(e as Error).message})`,
        }),
      );
      continue;
    }
    if (name.endsWith('.xlsx')) {
      used.push(rel(f));
      const rowsRead = await readCompareXlsx(raw, rel(f), problems);
      modules = modules.concat(rowsRead.map((r) => ({ ...r, order: modules.length + r.order })));
      continue;
    }
    if (name.endsWith('.csv')) {
      used.push(rel(f));
      modules = modules.concat(
        readCompareCsv(text, rel(f), problems).map((r) => ({
          ...r,
          order: modules.length + r.order,
        })),
      );
    } else if (name === 'config.json') {
      used.push(rel(f));
      try {
        const c = JSON.parse(text) as Record<string, unknown>;
        config = {
          task: typeof c.task === 'string' ? c.task : null,
          level: typeof c.level === 'string' ? c.level : null,
          seed: typeof c.seed === 'number' ? c.seed : null,
          deterministic: typeof c.is_deterministic === 'boolean' ? c.is_deterministic : null,
        };
        // a field the file does not carry is named as missing, never shown as "?"
        problems.push(
          m('import.config', {
            file: rel(f),
            task: config.task ?? m('import.notRecorded'),
            level: config.level ?? m('import.notRecorded'),
          }),
        );
      } catch (e) {
        problems.push(
          m('import.truncated', { file: rel(f), error: (e as Error).message.slice(0, 120) }),
        );
      }
    } else if (name === 'dump.json') {
      used.push(rel(f));
      const dir = dirname(f);
      let stacks = new Map<string, string>();
      const stackFile = join(dir, 'stack.json');
      if (existsSync(stackFile)) {
        try {
          stacks = readStacks(readFileSync(stackFile, 'utf8'));
        } catch (e) {
          problems.push(
            m('import.truncated', {
              file: rel(stackFile),
              error: (e as Error).message.slice(0, 120),
            }),
          );
        }
      } else problems.push(m('import.missingFile', { dir: rel(dir), file: 'stack.json' }));
      if (!existsSync(join(dir, 'construct.json')))
        problems.push(m('import.missingFile', { dir: rel(dir), file: 'construct.json' }));
      const d = readDumpJson(text, rel(f), problems, stacks);
      framework ??= d.framework;
      dumps.push({ file: rel(f), records: d.records, task: d.task });
    } else if (name === 'construct.json' && !existsSync(join(dirname(f), 'dump.json'))) {
      // a module tree without its dump: the modules, in the file's order, nothing measured
      used.push(rel(f));
      problems.push(m('import.missingFile', { dir: rel(dirname(f)), file: 'dump.json' }));
      try {
        const tree = JSON.parse(text) as Record<string, unknown>;
        for (const node of Object.keys(tree)) modules.push(oneSided(node, modules.length, null));
      } catch (e) {
        problems.push(
          m('import.truncated', { file: rel(f), error: (e as Error).message.slice(0, 120) }),
        );
      }
    } else if (name === 'stack.json' || name === 'construct.json') {
      used.push(rel(f));
    }
  }
  let compared: PrecisionCompareResult | null = null;
  if (dumps.length === 2) {
    // two dumps: the one under a bench/gpu/golden folder is the baseline
    const [a, b] = dumps as [(typeof dumps)[0], (typeof dumps)[0]];
    const [base, npu] = BENCH.test(b.file) && !BENCH.test(a.file) ? [b, a] : [a, b];
    const dtype = policyOf(npu.records);
    compared = compareDumps(base.records, npu.records, { dtype, mode: 'statistics' });
    modules = modules.concat(
      compared.modules.map((r) => ({ ...r, order: modules.length + r.order })),
    );
  } else
    for (const d of dumps) {
      problems.push(
        m('import.dumpOnly', {
          framework: framework ?? m('import.notRecordedIn', { file: d.file }),
          task: d.task ?? m('import.notRecordedIn', { file: d.file }),
        }),
      );
      for (const r of d.records) modules.push(oneSided(r.module, modules.length, r));
    }
  if (!used.length) problems.push(m('import.nothing', { path: basename(path) }));
  const counts = { pass: 0, warning: 0, error: 0 };
  for (const r of modules) if (r.result !== 'none') counts[r.result]++;
  return {
    dtype: compared?.dtype ?? policyOf(dumps[0]?.records ?? []),
    mode: 'statistics',
    counts,
    firstDivergence: firstDivergence(modules),
    modules,
    unmatched: compared?.unmatched ?? [],
    files: used,
    problems,
    config,
    framework,
  };
}

function oneSided(module: string, order: number, r: RawModuleRecord | null): ModuleCompare {
  return {
    module,
    order,
    cls: r?.cls ?? nameParts(module).cls,
    source: r?.callSite ?? null,
    kind: r?.kind ?? 'forward',
    result: 'none',
    reason: null,
    cosine: null,
    maxAbsErr: null,
    maxRelErr: null,
    meanRelErr: null,
    oneThousandthRatio: null,
    fiveThousandthsRatio: null,
    statDrift: null,
    baseline: null,
    target: r?.outputs[0] ?? null,
  };
}

function policyOf(records: RawModuleRecord[]): DtypePolicy {
  const dtypes = new Set(records.flatMap((r) => r.outputs.map((o) => o.dtype)));
  return dtypes.has('bfloat16') ? 'bf16' : dtypes.has('float16') ? 'fp16' : 'fp32';
}
