/**
 * The parsers under fuzz, run inside a worker thread (see harness.ts) so that a hang can be cut
 * off by its deadline and memory is capped by the worker's heap limit. Each target returns what
 * the property checks: the parser's output, its warnings, and a typed error if it refused.
 */
import { parentPort } from 'node:worker_threads';
import { AmwError } from '../../shared/errors';
import { parseNpuSmiKeyValue, parseKeyEqualsValue } from '../../electron/core/parsers/key-value';
import { parseNpuSmiInfo } from '../../electron/core/parsers/npu-smi';
import {
  cannFromToolkitInfo,
  cannFromVersionCfg,
  driverFromVersionInfo,
  firmwareFromVersionInfo,
} from '../../electron/core/parsers/versions';
import { parseKnownHosts } from '../../electron/core/ssh/known-hosts';
import { readSshConfigWithWarnings } from '../../electron/core/ssh/ssh-config';
import { parseInventory } from '../../electron/core/hosts/inventory-parse';
import { readTrace } from '../../electron/core/stages/ops/trace';
import { classifyTrace, variableInputs } from '../../electron/core/stages/ops/classify';
import { writeFileSync } from 'node:fs';

export interface TargetResult {
  output: unknown;
  warnings: string[];
  /** A refusal with a stable code (e.g. PROBE_FAILED): allowed. Anything untyped is a finding. */
  refused: string | null;
}

const targets: Record<string, (input: string, scratch: string) => TargetResult> = {
  'npu-smi-info': (s) => {
    const r = parseNpuSmiInfo(s);
    return { output: r, warnings: r.warnings, refused: null };
  },
  'npu-smi-t': (s) => {
    const r = parseNpuSmiKeyValue(s);
    return { output: r, warnings: r.warnings, refused: null };
  },
  'version-files': (s) => {
    const all = [
      cannFromToolkitInfo(s),
      cannFromVersionCfg(s),
      driverFromVersionInfo(s),
      firmwareFromVersionInfo(s),
    ];
    return {
      // one parse's output: the four readers share it, each keeps its own warnings
      output: { versions: all.map((r) => r.version), kv: parseKeyEqualsValue(s) },
      warnings: all.flatMap((r) => r.warnings),
      refused: null,
    };
  },
  'known-hosts': (s) => {
    const entries = parseKnownHosts(s, 'fuzz');
    return {
      output: entries.map((e) => ({ ...e, blob: e.blob.length })),
      warnings: [],
      refused: null,
    };
  },
  'ssh-config': (s, scratch) => {
    writeFileSync(scratch, s);
    const r = readSshConfigWithWarnings(scratch);
    return { output: r.hosts, warnings: r.warnings, refused: null };
  },
  'inventory-probe': (s) => {
    const inv = parseInventory(s, 'fuzz-host', '2026-01-01T00:00:00Z');
    return {
      output: inv,
      warnings: [...inv.warnings, ...(inv.npu?.warnings ?? [])],
      refused: null,
    };
  },
  'op-trace': (s) => {
    const trace = readTrace(s);
    const r = classifyTrace(trace, '2.1.0');
    return { output: { r, v: variableInputs(trace) }, warnings: [], refused: null };
  },
};

export function runTarget(name: string, input: string, scratch: string): TargetResult {
  try {
    return targets[name]!(input, scratch);
  } catch (err) {
    if (err instanceof AmwError) return { output: null, warnings: [], refused: err.code };
    throw err;
  }
}

export const TARGETS = Object.keys(targets);

parentPort?.on('message', (msg: { id: number; target: string; input: string; scratch: string }) => {
  const started = performance.now();
  try {
    const r = runTarget(msg.target, msg.input, msg.scratch);
    parentPort!.postMessage({
      id: msg.id,
      ok: true,
      ms: performance.now() - started,
      json: JSON.stringify(r.output),
      warnings: r.warnings,
      refused: r.refused,
    });
  } catch (err) {
    parentPort!.postMessage({
      id: msg.id,
      ok: false,
      ms: performance.now() - started,
      error: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err),
    });
  }
});
