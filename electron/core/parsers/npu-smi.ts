/**
 * Parser for the default `npu-smi info` table, every layout seen in the wild: 98/99/116-column HBM
 * tables (910, 910B, A3 with two dies per card, 950), 106-column 310/310P tables, the narrow doc
 * variant, and the failure messages npu-smi prints instead of a table.
 *
 * Rows are split on `|` and fields on whitespace; no fixed character offsets, because the widths
 * change between npu-smi versions. A value that cannot be read becomes null with a warning that
 * names the line — never a guessed number.
 */

import type { NpuDeviceFacts, NpuFacts } from '../../../shared/api';
import { printable, WarningList } from './printable';

/** npu-smi's health words. */
export const HEALTH_STATES = ['OK', 'Warning', 'Alarm', 'Critical', 'UNKNOWN'] as const;
export type Health = (typeof HEALTH_STATES)[number];
const HEALTH: readonly string[] = HEALTH_STATES;

/** One chip (die) as the table shows it; the shape is the contract's, so it crosses unchanged. */
export type NpuDevice = Omit<NpuDeviceFacts, 'health'> & { health: Health | null };

export type NpuProcess = NpuFacts['processes'][number];

export type NpuSmiLayout = 'hbm' | 'hbm-a3' | 'no-hbm' | 'npu-id' | 'unknown';

export interface NpuSmiInfo {
  smiVersion: string | null;
  /** The driver ("software") version printed next to the tool's version. */
  softwareVersion: string | null;
  layout: NpuSmiLayout;
  devices: NpuDevice[];
  processes: NpuProcess[];
  /** NPU ids reported as having no running process. */
  idleNpus: number[];
  /** npu-smi printed an error instead of a table (e.g. dcmi initialisation failed). */
  error: { message: string; code: number | null; meaning: string | null } | null;
  warnings: string[];
}

const DCMI_CODES: Record<number, string> = {
  [-8001]: 'invalid parameter',
  [-8002]: 'operation not permitted',
  [-8005]:
    'inner error (often: device occupied by another container, not privileged, or firmware upgraded without reboot)',
  [-8007]: 'invalid device id',
  [-8008]: 'device does not exist',
  [-8012]: 'not ready',
  [-8013]: 'not supported in a container',
  [-8020]: 'resource occupied (the device is used by another process or container)',
  [-8255]: 'not supported',
};

const FAILURE_PATTERNS: RegExp[] = [
  /dcmi (?:module|model) initiali[sz]ed? failed.*?ret is (-?\d+)/i,
  /npu get board type failed\. ret is (-?\d+)/i,
  /Failed to execute npu-smi .*?ret is (-?\d+)/i,
  /There is no NPU card on this server\./i,
  /Command or option is not found\./i,
  /This device does not support querying/i,
];

/** Cells between the outer pipes, trimmed. */
function cells(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split('|').map((c) => c.trim());
}

const isBorder = (line: string) => /^\s*\+[-=+|]*\+?\s*$/.test(line);

/** A copy where the author cut rows out: `...`, `…`, `⋮`, alone or as the cells of a row. */
const isElision = (line: string) => {
  // linear: drop the row's pipes and spaces, then only dots or ellipses may remain
  const rest = line.replace(/[\s|]+/g, '');
  // … and ⋮ as escapes: the CLI bundle stays ASCII, which bin/code-cache.js reads faster
  return /^[.\u2026\u22ee]+$/.test(rest) && /\.{3}|\u2026|\u22ee/.test(rest);
};

/** The widest npu-smi table is ~120 columns; a far longer line is not one (and stays cheap). */
const MAX_LINE = 1024;

/** A pasted shell prompt with the command, e.g. `[root@host ~]# npu-smi info`. */
const isPrompt = (line: string) => /^[^|]{0,200}?npu-smi\s+info\b/.test(line.trim());

/** A line quoted in a warning: shortened, and never raw control bytes. */
const quote = (line: string) => printable(line.trim().slice(0, 80));

/** Splits a field into tokens, keeping `used / total` pairs together even as `58626/ 65536`. */
function tokens(field: string): string[] {
  // split/trim/join instead of /\s*\/\s*/g, which is quadratic on long runs of spaces
  return field
    .split('/')
    .map((part) => part.trim())
    .join('/')
    .split(/\s+/)
    .filter(Boolean);
}

export function parseNpuSmiInfo(text: string): NpuSmiInfo {
  const out: NpuSmiInfo = {
    smiVersion: null,
    softwareVersion: null,
    layout: 'unknown',
    devices: [],
    processes: [],
    idleNpus: [],
    error: null,
    warnings: [],
  };
  if (typeof text !== 'string' || !text.trim()) {
    out.warnings.push('empty input: npu-smi printed nothing');
    return out;
  }
  const warnings = new WarningList();
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const long = new Set<number>();
  lines.forEach((line, i) => {
    if (line.length > MAX_LINE) {
      long.add(i);
      warnings.push(`line ${i + 1}: ${line.length} characters long, not an npu-smi line; ignored`);
    }
  });

  /** Lines outside the table that were understood: failure messages, [WARNING]s, prompts. */
  const understood = new Set<number>();
  lines.forEach((line, i) => {
    if (long.has(i)) return;
    for (const re of FAILURE_PATTERNS) {
      const m = re.exec(line);
      if (m) understood.add(i);
      if (m && !out.error) {
        const code = m[1] === undefined ? null : Number(m[1]);
        out.error = {
          message: printable(line.trim().slice(0, 500)),
          code,
          meaning: code === null ? null : (DCMI_CODES[code] ?? null),
        };
      }
    }
    if (/^\[WARNING\]/.test(line.trim())) {
      understood.add(i);
      warnings.push(printable(line.trim().slice(0, 300)));
    }
    if (isPrompt(line)) understood.add(i);
  });

  type Section = 'none' | 'devices' | 'processes';
  let section: Section = 'none';
  let pending: { lineNo: number; cells: string[] } | null = null;
  let sawTable = false;

  const warn = (lineNo: number, msg: string) => warnings.push(`line ${lineNo}: ${msg}`);

  lines.forEach((raw, i) => {
    const lineNo = i + 1;
    if (long.has(i)) return;
    const line = raw.trimEnd();
    if (!line.trim() || isBorder(line)) return;
    if (isElision(line)) {
      warn(
        lineNo,
        `rows were cut out of this copy (${quote(line)}): devices or processes may be missing`,
      );
      return;
    }
    if (!line.trim().startsWith('|')) {
      // prompts, warnings and failure messages are understood; anything else is said
      if (!understood.has(i)) warn(lineNo, `not part of an npu-smi table: ${quote(line)}`);
      return;
    }
    sawTable = true;
    const c = cells(line);
    const joined = c.join(' ');

    const version = /npu-smi\s+(\S+)\s+Version:\s*(\S+)/.exec(joined);
    if (version) {
      out.smiVersion = version[1]!;
      out.softwareVersion = version[2]!;
      return;
    }
    if (/\bName\b/.test(joined) && /\bHealth\b/.test(joined)) {
      section = 'devices';
      out.layout = /^NPU ID$/.test(c[0] ?? '') ? 'npu-id' : out.layout;
      return;
    }
    if (/Bus-Id/.test(joined) && /AICore|NPU Util/.test(joined)) {
      if (out.layout !== 'npu-id') {
        out.layout = /Phy-ID/.test(joined)
          ? 'hbm-a3'
          : /HBM-Usage/.test(joined)
            ? 'hbm'
            : /\bDevice\b/.test(joined)
              ? 'no-hbm'
              : 'unknown';
      }
      return;
    }
    if (/Process id/.test(joined)) {
      section = 'processes';
      pending = null;
      return;
    }
    if (section === 'devices') {
      if (!pending) {
        pending = { lineNo, cells: c };
        return;
      }
      const device = readDevice(out.layout, pending, { lineNo, cells: c }, warn);
      if (device) out.devices.push(device);
      pending = null;
      return;
    }
    if (section === 'processes') {
      const idle = /No running processes found in NPU\s+(\d+)/.exec(joined);
      if (idle) {
        out.idleNpus.push(Number(idle[1]));
        return;
      }
      const proc = readProcess(c, lineNo, warn);
      if (proc) out.processes.push(proc);
      return;
    }
    warn(lineNo, `unrecognised row outside any table section: ${quote(line)}`);
  });

  if (pending) {
    warn(
      (pending as { lineNo: number }).lineNo,
      'device row without its second line (output cut short?)',
    );
  }
  if (!sawTable && !out.error) {
    warnings.push('no npu-smi table found in the input');
  }
  out.warnings = warnings.done();
  return out;
}

type Warn = (lineNo: number, msg: string) => void;

function int(token: string | undefined, what: string, lineNo: number, warn: Warn): number | null {
  if (token === undefined || token === '') {
    warn(lineNo, `${what} missing`);
    return null;
  }
  if (token === 'NA' || token === '-' || token === 'N/A') return null;
  if (!/^-?\d+$/.test(token)) {
    warn(lineNo, `${what} is not a number: ${printable(JSON.stringify(token.slice(0, 40)))}`);
    return null;
  }
  return Number(token);
}

function float(token: string | undefined, what: string, lineNo: number, warn: Warn): number | null {
  if (token === undefined || token === '') {
    warn(lineNo, `${what} missing`);
    return null;
  }
  if (token === 'NA' || token === '-' || token === 'N/A') return null;
  if (!/^-?\d+(\.\d+)?$/.test(token)) {
    warn(lineNo, `${what} is not a number: ${printable(JSON.stringify(token.slice(0, 40)))}`);
    return null;
  }
  return Number(token);
}

function pair(
  token: string | undefined,
  what: string,
  lineNo: number,
  warn: Warn,
): [number | null, number | null] {
  const m = token === undefined ? null : /^(\d+|NA)\/(\d+|NA)$/.exec(token);
  if (!m) {
    warn(
      lineNo,
      `${what} is not "used / total": ${printable(JSON.stringify((token ?? '').slice(0, 40)))}`,
    );
    return [null, null];
  }
  return [m[1] === 'NA' ? null : Number(m[1]), m[2] === 'NA' ? null : Number(m[2])];
}

function readDevice(
  layout: NpuSmiLayout,
  first: { lineNo: number; cells: string[] },
  second: { lineNo: number; cells: string[] },
  warn: Warn,
): NpuDevice | null {
  // 950 ("NPU ID | Name | Health | …"): one more column, and the second row's first two are blank.
  const a =
    layout === 'npu-id'
      ? [`${first.cells[0]} ${first.cells[1]}`, ...first.cells.slice(2)]
      : first.cells;
  const b =
    layout === 'npu-id'
      ? [`${second.cells[0]} ${second.cells[1]}`.trim(), ...second.cells.slice(2)]
      : second.cells;
  if (a.length < 3 || b.length < 3) {
    warn(first.lineNo, 'device row does not have the expected three columns');
    return null;
  }
  const [idName = '', healthCell = '', metrics1 = ''] = a;
  const [chipCell = '', busCell = '', metrics2 = ''] = b;
  const idTokens = tokens(idName);
  const npu = int(idTokens[0], 'NPU id', first.lineNo, warn);
  if (npu === null) return null;
  const name = printable(idTokens.slice(1).join(' ')) || null;
  const health = HEALTH.includes(healthCell) ? (healthCell as Health) : null;
  if (!health)
    warn(
      first.lineNo,
      `unknown health value ${printable(JSON.stringify(healthCell.slice(0, 40)))}`,
    );

  const m1 = tokens(metrics1);
  const powerW = float(m1[0], 'power', first.lineNo, warn);
  const tempC = int(m1[1], 'temperature', first.lineNo, warn);

  const chipTokens = tokens(chipCell);
  const chip =
    layout === 'npu-id' && chipTokens.length === 0
      ? 0
      : int(chipTokens[0], 'chip id', second.lineNo, warn);
  const second2 =
    chipTokens[1] === undefined ? null : int(chipTokens[1], 'chip id', second.lineNo, warn);
  const busId = /^[0-9A-Fa-fx]{4}:[0-9A-Fa-fx]{2}:[0-9A-Fa-fx]{2}\.[0-9A-Fa-f]$/.test(busCell)
    ? busCell
    : null;
  if (!busId && busCell !== 'NA')
    warn(second.lineNo, `unreadable Bus-Id ${printable(JSON.stringify(busCell.slice(0, 40)))}`);

  const m2 = tokens(metrics2);
  const aicorePct = float(m2[0], 'AICore %', second.lineNo, warn);
  const [memUsedRaw, memTotalRaw] = pair(m2[1], 'Memory-Usage', second.lineNo, warn);
  let hbmUsedMB: number | null = null;
  let hbmTotalMB: number | null = null;
  const hasHbm =
    layout === 'hbm' ||
    layout === 'hbm-a3' ||
    layout === 'npu-id' ||
    (layout === 'unknown' && m2[2] !== undefined);
  if (hasHbm) [hbmUsedMB, hbmTotalMB] = pair(m2[2], 'HBM-Usage', second.lineNo, warn);
  // On 910B, A3 and 950 npu-smi prints DDR as "0 / 0": that is "not reported", not "zero of zero".
  const memReported = !(hasHbm && memUsedRaw === 0 && memTotalRaw === 0);

  return {
    npu,
    chip: chip ?? 0,
    name,
    health,
    powerW,
    tempC,
    aicorePct,
    hbmUsedMB,
    hbmTotalMB,
    memUsedMB: memReported ? memUsedRaw : null,
    memTotalMB: memReported ? memTotalRaw : null,
    busId,
    phyId: layout === 'hbm-a3' ? second2 : null,
    logicId: layout === 'no-hbm' ? second2 : null,
  };
}

function readProcess(c: string[], lineNo: number, warn: Warn): NpuProcess | null {
  if (c.length < 4) {
    warn(lineNo, 'process row does not have the expected columns');
    return null;
  }
  const [ids = '', pidCell = '', nameCell = '', memCell = ''] = c;
  const idTokens = tokens(ids);
  const npu = int(idTokens[0], 'NPU id', lineNo, warn);
  const pid = int(pidCell, 'pid', lineNo, warn);
  if (npu === null || pid === null) return null;
  return {
    npu,
    chip: idTokens[1] === undefined ? null : int(idTokens[1], 'chip id', lineNo, warn),
    pid,
    name: printable(nameCell),
    memMB: int(memCell, 'process memory', lineNo, warn),
  };
}
