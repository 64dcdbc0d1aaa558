import { posix } from 'node:path';
import type { Inventory, NpuFacts } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { parseKeyEqualsValue } from '../parsers/key-value';
import { parseNpuSmiInfo } from '../parsers/npu-smi';
import { printable } from '../parsers/printable';
import {
  cannFromToolkitInfo,
  cannFromVersionCfg,
  driverFromVersionInfo,
  firmwareFromVersionInfo,
} from '../parsers/versions';

interface Section {
  rc: number;
  out: string;
}

/** Reads the probe's one JSON document; anything else is a PROBE_FAILED with what came back. */
export function decodeProbe(stdout: string, probe: string): Record<string, Section> {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout.trim());
  } catch {
    throw new AmwError(
      'PROBE_FAILED',
      msg('errors.text.probeNotJson', {
        probe,
        output: printable(stdout.trim().slice(0, 200)) || '—',
      }),
      {
        probe,
        stdout: stdout.slice(0, 2000),
      },
    );
  }
  const sections =
    doc && typeof doc === 'object'
      ? (doc as { sections?: Record<string, { rc?: unknown; out?: unknown } | null> }).sections
      : undefined;
  if (!sections || typeof sections !== 'object' || Array.isArray(sections)) {
    throw new AmwError('PROBE_FAILED', msg('errors.text.probeNoSections', { probe }), {
      probe,
    });
  }
  // no prototype: a section named `__proto__` is just a name
  const out = Object.create(null) as Record<string, Section>;
  for (const [name, s] of Object.entries(sections)) {
    if (!s || typeof s !== 'object') continue;
    out[name] = {
      rc: typeof s.rc === 'number' ? s.rc : -1,
      out: typeof s.out === 'string' ? Buffer.from(s.out, 'base64').toString('utf8') : '',
    };
  }
  return out;
}

/** `==> /path` blocks of catif(): the content of each file that exists. */
function files(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let current: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^==> (.+)$/.exec(line);
    if (m) {
      current = m[1]!;
      out[current] = '';
    } else if (current) out[current] += `${line}\n`;
  }
  return out;
}

function envLines(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && !line.startsWith('#')) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

export function parseInventory(stdout: string, host: string, takenAt: string): Inventory {
  const s = decodeProbe(stdout, 'inventory');
  const warnings: string[] = [];
  const notes: string[] = [];
  const text = (name: string) => (s[name] && s[name].rc === 0 ? s[name].out : '');

  const osRelease = parseKeyEqualsValue(text('os')).values;
  const [kernelName, kernelRelease, machine] = text('uname').trim().split(/\s+/);

  const cpuText = text('cpu');
  const lscpu = text('lscpu');
  const model =
    /Model name:\s*(.+)/.exec(lscpu)?.[1]?.trim() ??
    /^(?:model name|Model name|CPU part)\s*:\s*(.+)$/m.exec(cpuText)?.[1]?.trim() ??
    null;
  const coresLine = cpuText.trim().split('\n').pop();
  const cores = coresLine && /^\d+$/.test(coresLine.trim()) ? Number(coresLine.trim()) : null;

  const mem = text('meminfo');
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(mem);
    return m ? Math.round(Number(m[1]) / 1024) : null;
  };

  const disks: Inventory['disks'] = [];
  for (const line of text('disk').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 6 && /^\d+$/.test(f[1]!) && /^\d+$/.test(f[3]!)) {
      const mount = f.slice(5).join(' ');
      if (!disks.some((d) => d.mount === mount)) {
        disks.push({
          mount,
          totalMB: Math.round(Number(f[1]) / 1024),
          freeMB: Math.round(Number(f[3]) / 1024),
        });
      }
    }
  }

  let npu: NpuFacts | null = null;
  const smi = s.npu_smi;
  if (smi && smi.rc !== 127) {
    const parsed = parseNpuSmiInfo(smi.out);
    npu = {
      smiVersion: parsed.smiVersion,
      devices: parsed.devices,
      processes: parsed.processes,
      error: parsed.error,
      warnings: parsed.warnings,
    };
    if (parsed.error)
      notes.push(
        `npu-smi: ${parsed.error.message}${parsed.error.meaning ? ` (${parsed.error.meaning})` : ''}`,
      );
    else if (smi.rc !== 0) notes.push(`npu-smi exited with ${smi.rc}`);
  }

  const toolkitFiles = files(text('toolkit'));
  const infoFile = Object.entries(toolkitFiles).find(([p]) =>
    p.endsWith('ascend_toolkit_install.info'),
  );
  const cfgFile = Object.entries(toolkitFiles).find(([p]) => p.endsWith('version.cfg'));
  const cannRead = infoFile
    ? cannFromToolkitInfo(infoFile[1])
    : cfgFile
      ? cannFromVersionCfg(cfgFile[1])
      : cannFromToolkitInfo(null);
  const driverRead = driverFromVersionInfo(Object.values(files(text('driver')))[0] ?? null);
  const firmwareRead = firmwareFromVersionInfo(Object.values(files(text('firmware')))[0] ?? null);
  warnings.push(...cannRead.warnings, ...driverRead.warnings, ...firmwareRead.warnings);

  const envAfterText = s.env_after?.rc === 0 ? s.env_after.out : '';
  const sourced = /^# sourced (.+)$/m.exec(envAfterText)?.[1];
  const setEnvPath = sourced ? posix.normalize(sourced) : null;
  const envBefore = envLines(text('env_before'));
  const envAfter = envLines(envAfterText);

  let python: Record<string, unknown> = {};
  if (s.python && s.python.rc === 0) {
    try {
      python = JSON.parse(s.python.out.trim().split('\n').pop() ?? '') as Record<string, unknown>;
    } catch {
      warnings.push(`python probe output is not JSON: ${printable(s.python.out.slice(0, 200))}`);
    }
  } else if (s.python && s.python.rc !== 127) {
    notes.push(`python3 failed (exit ${s.python.rc}): ${printable(s.python.out.slice(-300))}`);
  }
  const str = (v: unknown) => (typeof v === 'string' && v ? v : null);

  return {
    host,
    takenAt,
    os: osRelease.PRETTY_NAME ?? null,
    kernel: kernelName && kernelRelease ? `${kernelName} ${kernelRelease}` : null,
    arch: machine ?? null,
    hostname: text('hostname').trim() || null,
    cpu: { model, cores },
    memoryMB: kb('MemTotal'),
    memoryAvailableMB: kb('MemAvailable'),
    disks,
    npu,
    versions: {
      cann: cannRead.version,
      driver: driverRead.version,
      firmware: firmwareRead.version,
      python: str(python.python),
      torch: str(python.torch),
      torchNpu: str(python.torch_npu),
    },
    env: envAfter,
    envSourcedByDefault: 'ASCEND_TOOLKIT_HOME' in envBefore || 'ASCEND_HOME_PATH' in envBefore,
    setEnvPath,
    devices: text('devices')
      .split('\n')
      .map((l) => /(\/dev\/\S+)\s*$/.exec(l)?.[1])
      .filter((d): d is string => !!d),
    notes,
    warnings,
  };
}
