import * as z from 'zod';
import { method } from '../../api/define';
import type { Msg } from '../../api/text';

export type DtypePolicy = 'fp32' | 'bf16' | 'fp16';
export type PrecisionMode = 'statistics' | 'tensor';
/** msprobe 26.x's per-row levels (error > warning > pass). */
export type PrecisionResult = 'pass' | 'warning' | 'error';

/** One output tensor as the harness (or an msprobe dump) summarised it. */
export interface TensorStats {
  dtype: string;
  shape: number[];
  /** Over the finite elements; null when there are none. */
  max: number | null;
  min: number | null;
  mean: number | null;
  /** L2 norm. */
  norm: number | null;
  nan: number;
  inf: number;
  numel: number;
  /** msprobe's md5/xor summary mode: the checksum (CRC-32) of the tensor's bytes. */
  md5?: string;
  /** tensor mode: where the capped, flattened float32 copy sits in the run's tensor file. */
  data?: { offset: number; count: number };
}

/** One module call in execution order (forward hooks fire as a module's forward returns). */
export interface RawModuleRecord {
  /** `named_modules()` path ('' is the model itself). */
  module: string;
  /** Which call of this module (0 for the first). */
  call: number;
  cls: string;
  order: number;
  /** The module class's definition and the user's call site (`file:line`). */
  classSource: string | null;
  callSite: string | null;
  outputs: TensorStats[];
  /** `op`: a selected aten op, named `<enclosing module>/aten::<op>`. */
  kind?: RecordKind;
}

export type RecordKind = 'forward' | 'grad' | 'op';

export interface Determinism {
  seed: number | null;
  torchDeterministic: boolean | null;
  cudnnDeterministic: boolean | null;
  npuDeterministic: boolean | null;
  hcclDeterministic: string | null;
  worldSize: number;
}

/** What the dump harness printed, one side. */
export interface RawDump {
  v: number;
  role: 'baseline' | 'target';
  entry: string | null;
  torch?: string | null;
  torchNpu?: string | null;
  /** Where the tensors really were (cpu, cuda, npu), and why when it is not the accelerator. */
  device: string;
  deviceNote: string | null;
  dtype: DtypePolicy;
  autocast: { device: string; dtype: string } | null;
  bf16Supported: boolean | null;
  determinism: Determinism;
  gradScaler: {
    found: boolean;
    initScale: number | null;
    growthInterval: number | null;
    at: string | null;
  } | null;
  mode: PrecisionMode;
  modules: RawModuleRecord[];
  /** baseline: the saved weights and inputs. */
  state?: { path: string; sha256: string; bytes: number } | null;
  /** target: the weights and inputs it loaded (checksum verified). */
  loaded?: { sha256: string } | null;
  tensors?: { path: string; bytes: number } | null;
  batches: number;
  warnings: string[];
  error: {
    type: string;
    message: string;
    traceback: string;
    phase?: string;
    /** The engine's own words for a failure it saw (no result printed…), shown instead of `message`. */
    text?: Msg;
  } | null;
  seconds?: number;
  forwardSeconds?: number;
  /** Script mode: the user's script ran as-is (the entry field holds its path). */
  script?: boolean;
  /** Selected aten ops: which were asked for, how they were hooked, which were seen. */
  opHooks?: {
    requested: string[];
    via: string | null;
    seen: string[];
    note: string | null;
    dropped: number;
  } | null;
  /** Tensor mode: outputs past the run's byte cap, kept as statistics only. */
  tensorsDropped?: number;
  /** Set instead of everything else when the dump was too large for stdout: where it is on the host. */
  file?: string;
}

/** One module compared: msprobe's metrics where tensors exist, statistics deltas always. */
export interface ModuleCompare {
  module: string;
  order: number;
  cls: string | null;
  source: string | null;
  kind: RecordKind;
  /** `none`: one side only (an imported one-sided dump): nothing to compare against. */
  result: PrecisionResult | 'none';
  /** Why not pass, as an i18n key of `stage-precision` with its params. */
  reason: { key: string; params?: Record<string, string | number> } | null;
  cosine: number | null;
  maxAbsErr: number | null;
  maxRelErr: number | null;
  meanRelErr: number | null;
  oneThousandthRatio: number | null;
  fiveThousandthsRatio: number | null;
  /** Statistics mode: the largest |N-B| / scale over max, min, mean and norm (see compare.ts). */
  statDrift: number | null;
  baseline: TensorStats | null;
  target: TensorStats | null;
}

export interface FirstDivergence {
  module: string;
  order: number;
  source: string | null;
  cosine: number | null;
  maxAbsErr: number | null;
  maxRelErr: number | null;
  statDrift: number | null;
  result: PrecisionResult;
  /** The session's code review has a scan of the source file: where to open it. */
  review: { scanId: number; file: string; line: number } | null;
}

export interface PrecisionCompareResult {
  dtype: DtypePolicy;
  mode: PrecisionMode;
  counts: { pass: number; warning: number; error: number };
  firstDivergence: FirstDivergence | null;
  modules: ModuleCompare[];
  /** Modules on one side only (names differ between the two sides). */
  unmatched: { module: string; side: 'baseline' | 'target' }[];
}

export interface PrecisionRunView extends PrecisionCompareResult {
  stageRunId: number;
  source: 'run' | 'import';
  host: string;
  baseline: string;
  entry: string;
  backward: boolean;
  inputsSha256: string | null;
  createdAt: string;
  /** Files, modules or columns an import could not read (partial results kept). */
  problems: Msg[];
}

export interface PrecisionHistoryRow {
  stageRunId: number;
  source: 'run' | 'import';
  host: string;
  baseline: string;
  entry: string;
  dtype: string;
  mode: string;
  createdAt: string;
  firstDivergence: string | null;
  counts: { pass: number; warning: number; error: number };
}

/** Two runs of a session set side by side: how the first divergence moved, what changed. */
export interface PrecisionRunsCompare {
  a: PrecisionHistoryRow;
  b: PrecisionHistoryRow;
  /** Where each run's first divergence sits (order in execution order), null when none. */
  first: {
    a: { module: string; order: number; source: string | null } | null;
    b: { module: string; order: number; source: string | null } | null;
  };
  /** later: b diverges further down (or not at all); earlier: sooner; same; none: neither diverges. */
  moved: 'later' | 'earlier' | 'same' | 'gone' | 'appeared' | 'none';
  /** The sentence to show (i18n key with params). */
  summary: Msg;
  /** Modules in both runs whose result changed, in b's execution order (capped). */
  changed: {
    module: string;
    order: number;
    a: ModuleCompare['result'];
    b: ModuleCompare['result'];
    /** fixed: worse in a than in b; regressed: the other way round. */
    change: 'fixed' | 'regressed';
  }[];
  /** Modules only one of the two runs has (capped). */
  onlyIn: { module: string; run: 'a' | 'b' }[];
  counts: { fixed: number; regressed: number; onlyA: number; onlyB: number };
}

/** One side's raw dump for drill-down: the header as dumped and the records asked for. */
export interface DumpSide extends Omit<RawDump, 'modules'> {
  /** The module's records (every call) or, without a module, the first records (capped). */
  modules: RawModuleRecord[];
  /** How many records the whole dump holds. */
  total: number;
}

export interface PrecisionDumps {
  /** Null when the run keeps no raw dump for that side (an msprobe import). */
  baseline: DumpSide | null;
  target: DumpSide | null;
}

const RunId = z.number().int().positive();

export const precisionApi = {
  /** One precision run (or import): every module compared, the first divergence. */
  'precision.get': method(z.object({ stageRunId: RunId }).strict()).returns<PrecisionRunView>(),
  /**
   * The raw dumps of both sides as the harness printed them: device, versions, determinism, and
   * the records of one module (its row's name in `precision.get`, or a `named_modules()` path for
   * every call of it); without a module, the first records.
   */
  'precision.dumps': method(
    z.object({ stageRunId: RunId, module: z.string().max(4096).optional() }).strict(),
  ).returns<PrecisionDumps>(),
  /** A session's precision runs over time, newest first. */
  'precision.history': method(
    z.object({ sessionId: z.number().int().positive() }).strict(),
  ).returns<PrecisionHistoryRow[]>(),
  /** Run b against run a (both precision runs, any sessions): how the first divergence moved. */
  'precision.compareRuns': method(
    z.object({ a: RunId, b: RunId }).strict(),
  ).returns<PrecisionRunsCompare>(),
  /** An msprobe dump folder, dump.json, compare_result csv or xlsx (or config.json) into a session. */
  'precision.import': method(
    z
      .object({
        path: z.string().min(1).max(4096),
        sessionId: z.number().int().positive().optional(),
        project: z.string().min(1).max(80).optional(),
      })
      .strict(),
  ).returns<{ sessionId: number; stageRunId: number; problems: Msg[]; files: string[] }>(),
};
