import * as z from 'zod';
import { FORMATS } from '../../api/validation';
import { method } from '../../api/define';

export type OpClass = 'direct' | 'needs-change' | 'cpu-fallback' | 'unsupported';
export const OP_CLASSES: OpClass[] = ['direct', 'needs-change', 'cpu-fallback', 'unsupported'];

/** One op as the capture harness on the host recorded it. */
export interface RawTracedOp {
  op: string;
  overload: string;
  count: number;
  shapes: number[][][];
  distinctShapes: number;
  dynamic: boolean;
  dtypes: string[];
  modules: string[];
  sources: { at: string; text: string }[];
  sparse: boolean;
  phases: string[];
  /** The host's dispatcher: the op runs through a composite kernel. */
  composite: 'explicit' | 'implicit' | null;
  /** For composite-explicit ops: the ops its composite kernel calls (null: not captured). */
  callees: string[] | null;
}

export interface RawOpTrace {
  v: number;
  entry: string | null;
  backward: boolean;
  torch?: string;
  torchNpu?: string | null;
  batches: number;
  inputs: ({ shape: number[]; dtype: string } | { type: string })[][];
  ops: RawTracedOp[];
  warnings: string[];
  error: { type: string; message: string; traceback: string; phase?: string } | null;
  seconds?: number;
  /** On an NPU host: ops torch_npu said it ran on the CPU, and AICPU notices from the run's log. */
  observedFallbacks?: string[];
  aicpu?: string[];
  /** Composite facts of ops seen only inside other ops' composite kernels. */
  calleeFacts?: Record<string, Pick<RawTracedOp, 'composite' | 'callees'>>;
}

export interface OpRow {
  /** `aten::name` */
  op: string;
  overload: string;
  count: number;
  shapes: number[][][];
  distinctShapes: number;
  dtypes: string[];
  class: OpClass;
  /** Why this class, in a sentence (op list, support-table note, composite callees). */
  reason: string;
  dynamic: boolean;
  modules: string[];
  sources: { at: string; text: string }[];
  composite: 'explicit' | 'implicit' | null;
  replacement?: string;
}

export interface OpsBreakdown {
  direct: number;
  needsChange: number;
  cpuFallback: number;
  unsupported: number;
}

export interface OpsResult {
  targetTorchNpu: string;
  /** The op list used, e.g. torch2.7.1_v7.3.0, and why when it is not an exact match. */
  opList: string;
  opListNote: string | null;
  breakdown: OpsBreakdown;
  ops: OpRow[];
  /** Positional inputs whose shape changes across batches: the source of dynamic shapes. */
  variableInputs: { arg: number; dims: number[]; seen: number[][] }[];
  error: RawOpTrace['error'];
  /** AICPU notices from the run's log (NPU hosts). */
  aicpu: string[];
  torch: string | null;
  batches: number;
  warnings: string[];
}

export interface OpsCompareRow {
  op: string;
  overload: string;
  a: OpClass | null;
  b: OpClass | null;
  change: 'improved' | 'regressed' | 'same' | 'new' | 'gone';
}

const RunId = z.number().int().positive();
export const TorchNpuVersion = z
  .string()
  .regex(/^\d+\.\d+(\.\d+)?([.+-][0-9A-Za-z.]+)?$/, FORMATS.formatTorchNpu);

export const opsApi = {
  /** The op table of an ops-stage run, classified for its target or for another version. */
  'ops.get': method(
    z.object({ stageRunId: RunId, torchNpu: TorchNpuVersion.optional() }).strict(),
  ).returns<OpsResult & { stageRunId: number; host: string; entry: string }>(),
  /** Two runs, or one run against two torch_npu versions: what moves between classes. */
  'ops.compare': method(
    z
      .object({
        a: RunId,
        b: RunId,
        torchNpuA: TorchNpuVersion.optional(),
        torchNpuB: TorchNpuVersion.optional(),
      })
      .strict(),
  ).returns<{ a: OpsBreakdown; b: OpsBreakdown; rows: OpsCompareRow[] }>(),
};
