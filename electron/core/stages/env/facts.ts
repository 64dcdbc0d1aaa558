import type { Inventory } from '../../../../shared/api';
import { decodeProbe, parseInventory } from '../../hosts/inventory-parse';

export interface PythonRun {
  /** Exit code of the child Python (127: no python3; 124: timed out). */
  rc: number;
  result: Record<string, unknown> | null;
  /** Everything the child printed besides the result line (warnings, CANN logs, tracebacks). */
  log: string;
}

/** Everything the environment checks read, from one probe round trip. */
export interface EnvFacts {
  inventory: Inventory;
  rcLines: { file: string; line: number; text: string }[];
  deviceAccess: { path: string; read: boolean; write: boolean }[];
  groups: string[];
  limits: { nofile: [number, number]; memlock: [number, number] } | null;
  dists: Record<string, string>;
  importTest: PythonRun | null;
  opTest: PythonRun | null;
  /** Sections that were missing or unreadable (python3 absent, probe cut short). */
  gaps: string[];
}

const json = <T>(text: string | undefined, fallback: T): T => {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

function pythonRun(section: { rc: number; out: string } | undefined): PythonRun | null {
  if (!section) return null;
  const lines = section.out.split('\n');
  const marker = lines.findIndex((l) => l.startsWith('@@AMW-RESULT@@'));
  const result =
    marker >= 0
      ? json<Record<string, unknown> | null>(lines[marker]!.slice('@@AMW-RESULT@@'.length), null)
      : null;
  return {
    rc: section.rc,
    result,
    log: lines
      .filter((_, i) => i !== marker)
      .join('\n')
      .trim(),
  };
}

export function parseEnvFacts(stdout: string, host: string, takenAt: string): EnvFacts {
  const sections = decodeProbe(stdout, 'env');
  const inventory = parseInventory(stdout, host, takenAt);
  const gaps = [
    'rc_files',
    'device_access',
    'groups',
    'limits',
    'dists',
    'import_test',
    'op_test',
  ].filter((s) => !sections[s]);
  return {
    inventory,
    rcLines: json(sections.rc_files?.out, []),
    deviceAccess: json(sections.device_access?.out, []),
    groups: json(sections.groups?.out, []),
    limits: json(sections.limits?.out, null),
    dists: json(sections.dists?.out, {}),
    importTest: pythonRun(sections.import_test),
    opTest: pythonRun(sections.op_test),
    gaps,
  };
}
