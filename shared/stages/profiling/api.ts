import * as z from 'zod';
import { method } from '../../api/define';
import type { Msg } from '../../api/text';

/** What an imported folder is: torch_npu.profiler output, msprof output, a cluster analysis, torch.profiler. */
export type ProfileKind = 'torch_npu' | 'msprof' | 'cluster' | 'torch' | 'mixed' | 'empty';

/** A file that could not be read whole, or a row that was not as its header says. */
export interface ProfileWarning {
  /** Path relative to the imported folder. */
  file: string;
  /** 1-based line of the file (the first line of a multi-line row), or null for the whole file. */
  line: number | null;
  message: Msg;
}

export interface ProfileRank {
  rank: number | null;
  /** Folder relative to the imported one ('.' when it is the folder itself). */
  dir: string;
  kind: ProfileKind;
  /** The files read, relative to `dir`. */
  files: string[];
}

export interface TimeShare {
  us: number;
  /** Of all kernel time. */
  share: number;
  count: number;
}

export interface TopKernel {
  name: string;
  opType: string;
  taskType: string;
  us: number;
  count: number;
}

export interface KernelSummary {
  count: number;
  totalUs: number;
  /** Keyed by the task type as the file writes it (`AI_CORE`, `AI_CPU`, `HCCL`, `N/A` …). */
  byTaskType: Record<string, TimeShare>;
  byOpType: Record<string, TimeShare & { taskType: string }>;
  top: TopKernel[];
  /** `OP State` counts (null: the column is absent, as in 2023 captures and Level0). */
  opState: { dynamic: number; static: number; other: number } | null;
  /** Op types run on the AI CPU (task type `AI_CPU`), by time. */
  aicpuOps: { opType: string; us: number; count: number }[];
  /** The longest single kernel (the AI CPU rule's "max task duration"). */
  maxUs: number;
}

/** One step of one rank, from step_trace_time.csv or the cluster's table (µs). */
export interface StepBreakdown {
  rank: number | null;
  step: number | null;
  computingUs: number;
  communicationNotOverlappedUs: number;
  overlappedUs: number;
  freeUs: number;
  bubbleUs: number;
  preparingUs: number | null;
  /** Computing + Communication(Not Overlapped) + Free: the step's end-to-end time. */
  totalUs: number;
}

/** A step's wall time without a breakdown (torch.profiler's ProfilerStep#N, or a breakdown's total). */
export interface StepTime {
  rank: number | null;
  step: number | null;
  us: number;
}

export type Severity = 'high' | 'medium' | 'low';

export interface Advice {
  /** `overall.free`, `aicpu`, `dynamic-shape`, `op-dispatch`, `slow-rank`, `slow-link`, `env-vars` … */
  id: string;
  severity: Severity;
  message: Msg;
  /** What to do, from the rules (msprof-analyze's and the seeds'). */
  suggestion: Msg;
  /** The time over the step time it is measured against (null: no time basis). */
  share: number | null;
  evidence: unknown;
}

export interface SlowRankDimension {
  step: number | null;
  dimension: 'computing' | 'communication' | 'free';
  maxRank: number;
  minRank: number;
  maxUs: number;
  minUs: number;
  /** (max - min) / mean step time over the ranks. */
  ratio: number;
}

export interface SlowLink {
  transport: 'RDMA' | 'SDMA';
  maxRank: number;
  minRank: number;
  maxGBps: number;
  minGBps: number;
  meanGBps: number;
  /** (max - min) / mean. */
  ratio: number;
}

/** A ProfilerStep#N of a trace file: from its earliest start to its latest end (the trace's µs). */
export interface StepWindow {
  /** The trace, relative to the imported folder. */
  file: string;
  step: number;
  startUs: number;
  endUs: number;
}

export interface ProfileResult {
  source: string;
  kind: ProfileKind;
  ranks: ProfileRank[];
  kernels: KernelSummary | null;
  steps: StepBreakdown[];
  stepTimes: StepTime[];
  /** trace_view.json / msprof_*.json facts; null when no timeline was read. */
  timeline: {
    events: number;
    /** `AscendCL@aclopCompileAndExecute` calls and their time. */
    opCompile: { count: number; us: number };
    /** Dataloader calls at or above the rule's threshold. */
    slowDataloader: { name: string; us: number }[];
    processes: string[];
    /** torch.profiler: the ops by total time (a CPU or GPU run has no kernel table of Ascend's). */
    ops: { name: string; us: number; count: number }[];
    /** Where each ProfilerStep# is in each trace (absent in profiles stored before it was kept). */
    stepWindows?: StepWindow[];
  } | null;
  communication: { slowRank: SlowRankDimension[]; slowLink: SlowLink[] } | null;
  env: Record<string, string> | null;
  advice: Advice[];
  warnings: ProfileWarning[];
  /** Bytes read, for the import's MB/s. */
  bytes: number;
}

export interface ProfileCompareRow {
  name: string;
  aUs: number | null;
  bUs: number | null;
  /** b / a (null when either side lacks it). */
  ratio: number | null;
}

export interface ProfileCompare {
  a: { source: string; kind: ProfileKind; stepUs: number | null };
  b: { source: string; kind: ProfileKind; stepUs: number | null };
  /** b's mean step time over a's. */
  stepRatio: number | null;
  categories: {
    name: 'computing' | 'communicationNotOverlapped' | 'free' | 'bubble';
    aUs: number | null;
    bUs: number | null;
    diffUs: number | null;
  }[];
  byTaskType: ProfileCompareRow[];
  byOpType: ProfileCompareRow[];
  advice: { fixed: string[]; added: string[]; kept: string[] };
}

/**
 * One step of a trace_view.json, columnar (electron/core/stages/profiling/timeline.ts): events in
 * lanes (one nesting depth of one process/thread track, contiguous, sorted by start, never
 * overlapping). The columns are base64 of little-endian typed arrays, so a million events cross
 * IPC or the WebSocket as ~20 MB of text rather than a million objects.
 */
export interface StepTimeline {
  /** The trace read, relative to the imported folder. */
  file: string;
  /** The ProfilerStep# ids in the trace (empty: no markers; the whole trace is shown). */
  steps: number[];
  step: number | null;
  /** The window, in the trace's µs. */
  startUs: number;
  endUs: number;
  tracks: { pid: string; tid: string; name: string }[];
  lanes: { track: number; depth: number; from: number; to: number }[];
  /** The string table of `name`. */
  names: string[];
  events: number;
  /** Float64Array: µs from startUs. */
  start: string;
  /** Float32Array: µs. */
  dur: string;
  /** Uint32Array: index into names. */
  name: string;
  /** More events in the window than the cap: the first ones are shown. */
  truncated: boolean;
  warnings: ProfileWarning[];
}

const RunId = z.number().int().positive();
const Dir = z.string().min(1).max(4096);

export const profilingApi = {
  /** Reads a local folder of profiler output (any of the layouts) and stores it in a session. */
  'profiling.import': method(
    z
      .object({
        dir: Dir,
        sessionId: z.number().int().positive().optional(),
        project: z.string().min(1).max(80).optional(),
      })
      .strict(),
  ).returns<{ jobId: string; sessionId: number; stageRunId: number }>(),
  /**
   * Copies a folder of profiler output (the same path on each host: every rank a node wrote) off
   * several hosts over SFTP into the data dir, then reads it all as one import; a host that
   * cannot be reached or lacks the folder, and ranks missing from the whole, are warnings.
   */
  'profiling.gather': method(
    z
      .object({
        hosts: z.array(z.string().min(1).max(255)).min(1).max(1024),
        dir: Dir,
        sessionId: z.number().int().positive().optional(),
        project: z.string().min(1).max(80).optional(),
        password: z.string().max(1024).optional(),
        /** The job's world size: every rank 0…N-1 is expected, the last ones included. */
        worldSize: z.number().int().min(1).max(65536).optional(),
      })
      .strict(),
  ).returns<{ jobId: string; sessionId: number; stageRunId: number }>(),
  /** A stored profile (from a run on a host or an import). */
  'profiling.get': method(z.object({ stageRunId: RunId }).strict()).returns<
    ProfileResult & { stageRunId: number; entry: string | null; profiler: string | null }
  >(),
  /**
   * One step of a stored profile's timeline (trace_view.json of rank folder `unit`, an index into
   * `ranks`; the first with a trace when absent), read again from the profile's files.
   */
  'profiling.timeline': method(
    z
      .object({
        stageRunId: RunId,
        unit: z.number().int().min(0).max(100_000).optional(),
        step: z.number().int().min(0).optional(),
      })
      .strict(),
  ).returns<StepTimeline>(),
  /** Stored profiles to pick from (the session's first, then the others), newest first. */
  'profiling.list': method(
    z
      .object({
        sessionId: z.number().int().positive().optional(),
        limit: z.number().int().min(1).max(1000).default(200),
      })
      .strict(),
  ).returns<
    {
      stageRunId: number;
      sessionId: number;
      /** The host(s) it ran on (`(local)` for an import of a folder here). */
      host: string;
      source: string;
      kind: string;
      profiler: string | null;
      createdAt: string;
    }[]
  >(),
  /** Two stored profiles side by side: b against a. */
  'profiling.compare': method(z.object({ a: RunId, b: RunId }).strict()).returns<ProfileCompare>(),
};
