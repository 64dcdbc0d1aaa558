import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type {
  ProfileKind,
  ProfileRank,
  ProfileResult,
  ProfileWarning,
  SlowLink,
  StepBreakdown,
  StepTime,
} from '../../../../shared/stages/profiling/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import { adviseProfile, profilingAdvice, type AdviceRules } from './advice';
import { m, type ParserChoice } from './csv-stream';
import { KernelAgg, readKernelTable, readOpStatistic } from './kernels';
import { readClusterCommunication, readStepTrace, slowRanks } from './steps';
import { streamTrace, type TraceEvent } from './trace-stream';
import { STEP, StepWindows } from './step-windows';

/** Where a file of interest sits, and what it is. */
type Role = 'kernels' | 'opStatistic' | 'steps' | 'trace' | 'clusterSteps' | 'clusterComm';

interface Unit {
  dir: string;
  kind: ProfileKind;
  rank: number | null;
  files: { path: string; role: Role }[];
}

const SKIP_DIRS = new Set([
  'device_',
  'host',
  'FRAMEWORK',
  'logs',
  'mindstudio_profiler_log',
  'sqlite',
]);
const MAX_DEPTH = 8;

function roleOf(name: string): Role | null {
  if (name === 'kernel_details.csv' || /^op_summary(_slice)?[_\d]*\.csv$/.test(name))
    return 'kernels';
  if (/^op_statistic[_\d]*\.csv$/.test(name)) return 'opStatistic';
  if (name === 'step_trace_time.csv') return 'steps';
  if (name === 'cluster_step_trace_time.csv') return 'clusterSteps';
  if (name === 'cluster_communication.json') return 'clusterComm';
  if (
    name === 'trace_view.json' ||
    /^msprof_[\d_]+\.json$/.test(name) ||
    /\.pt\.trace\.json$/.test(name)
  )
    return 'trace';
  return null;
}

function kindOf(dir: string, roles: Role[], names: string[]): ProfileKind {
  if (roles.some((r) => r === 'clusterSteps' || r === 'clusterComm')) return 'cluster';
  if (
    basename(dir) === 'mindstudio_profiler_output' ||
    names.some((n) => n.startsWith('op_summary'))
  )
    return 'msprof';
  if (names.some((n) => n.endsWith('.pt.trace.json'))) return 'torch';
  return 'torch_npu';
}

/** Rank of a unit: profiler_info_{rank}.json (its rank_id), else `rank_3`/`rank3` in the name. */
function rankOf(dir: string): number | null {
  try {
    for (const f of readdirSync(dir)) {
      const mm = /^profiler_info_(\d+)\.json$/.exec(f);
      if (mm) {
        try {
          const info = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { rank_id?: number };
          if (Number.isInteger(info.rank_id) && info.rank_id! >= 0) return info.rank_id!;
        } catch {
          /* the name is enough */
        }
        return Number(mm[1]);
      }
    }
  } catch {
    /* unreadable: no rank */
  }
  const mm = /rank[_-]?(\d+)/i.exec(basename(dir));
  return mm ? Number(mm[1]) : null;
}

/** Walks the folder: every rank folder (torch_npu's *_ascend_pt, msprof's PROF_*, loose files). */
export function discover(root: string): Unit[] {
  const units = new Map<string, Unit>();
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const files = entries.filter((e) => e.isFile()).map((e) => e.name);
    const roles = files.map((f) => [f, roleOf(f)] as const).filter((x) => x[1] !== null);
    if (roles.length) {
      const base = basename(dir);
      let unitDir = dir;
      if (base === 'ASCEND_PROFILER_OUTPUT') unitDir = dirname(dir);
      else if (base === 'mindstudio_profiler_output') {
        unitDir = dirname(dir);
        // torch_npu keeps msprof's raw output inside its own folder: the same kernels twice
        if (existsSync(join(dirname(unitDir), 'ASCEND_PROFILER_OUTPUT'))) return;
      }
      const unit = units.get(unitDir) ?? {
        dir: unitDir,
        kind: kindOf(
          dir,
          roles.map((r) => r[1]!),
          files,
        ),
        rank: rankOf(unitDir),
        files: [],
      };
      for (const [f, role] of roles) unit.files.push({ path: join(dir, f), role: role! });
      units.set(unitDir, unit);
    }
    if (depth >= MAX_DEPTH) return;
    for (const e of entries)
      if (e.isDirectory() && !SKIP_DIRS.has(e.name) && !e.name.startsWith('device_'))
        walk(join(dir, e.name), depth + 1);
  };
  walk(root, 0);
  return [...units.values()].sort(
    (a, b) => (a.rank ?? -1) - (b.rank ?? -1) || a.dir.localeCompare(b.dir),
  );
}

function envOf(units: Unit[]): Record<string, string> | null {
  for (const u of units) {
    const f = join(u.dir, 'profiler_metadata.json');
    if (!existsSync(f)) continue;
    try {
      const doc = JSON.parse(readFileSync(f, 'utf8')) as {
        ENV_VARIABLES?: Record<string, unknown>;
      };
      if (doc.ENV_VARIABLES && typeof doc.ENV_VARIABLES === 'object')
        return Object.fromEntries(
          Object.entries(doc.ENV_VARIABLES).map(([k, v]) => [k, v === null ? '' : String(v)]),
        );
    } catch {
      /* a broken metadata file has no env to read */
    }
  }
  return null;
}

/** The timeline's facts, whatever wrote it (torch_npu, msprof, torch.profiler on CPU or GPU). */
class TimelineAgg {
  events = 0;
  opCompile = { count: 0, us: 0 };
  slowDataloader: { name: string; us: number }[] = [];
  processes = new Set<string>();
  ops = new Map<string, { us: number; count: number }>();
  stepTimes: StepTime[] = [];
  /** Where each ProfilerStep# is, per trace file: the timeline view reads one step in one pass. */
  windows = new StepWindows();
  /** The trace being read (relative to the imported folder). */
  file = '';
  constructor(
    private readonly dataloaderUs: number,
    private readonly kernels: KernelAgg,
  ) {}

  add(e: TraceEvent, rank: number | null) {
    const name = typeof e.name === 'string' ? e.name : '';
    if (e.ph === 'M') {
      if (name === 'process_name' && typeof e.args?.name === 'string')
        this.processes.add(e.args.name);
      return;
    }
    if (e.ph !== 'X') return;
    const dur = typeof e.dur === 'number' ? e.dur : Number(e.dur) || 0;
    if (name.endsWith('aclopCompileAndExecute')) {
      this.opCompile.count++;
      this.opCompile.us += dur;
    }
    if (/dataloader/i.test(name) && dur >= this.dataloaderUs && this.slowDataloader.length < 50)
      this.slowDataloader.push({ name, us: dur });
    const step = STEP.exec(name);
    if (step) {
      this.stepTimes.push({ rank, step: Number(step[1]), us: dur });
      this.windows.add(this.file, Number(step[1]), e.ts, e.dur);
    }
    // kineto writes cat "cpu_op"; the legacy exporter (torch built without kineto, as Debian's
    // 1.13) writes no cat and pid "CPU functions"
    else if (e.cat === 'cpu_op' || (e.cat === undefined && e.pid === 'CPU functions')) {
      const o = this.ops.get(name);
      if (o) {
        o.us += dur;
        o.count++;
      } else this.ops.set(name, { us: dur, count: 1 });
    } else if (e.cat === 'kernel') this.kernels.add(name, name, 'GPU_KERNEL', dur, null);
  }
}

export interface ImportOptions {
  signal?: AbortSignal;
  rules?: AdviceRules;
  /** Called with each file as it is read (the job's progress). */
  onFile?: (done: number, total: number, file: string) => void;
  /** 'reference': the maintained parsers alone (papaparse, @streamparser/json), for the differential tests. */
  parser?: ParserChoice;
}

/** Reads every profiler output under `root` and analyses it. */
export async function importProfile(
  root: string,
  opts: ImportOptions = {},
): Promise<ProfileResult> {
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new AmwError('NOT_FOUND', msg('errors.text.notAFolder', { path: root }), { dir: root });
  const rules = opts.rules ?? profilingAdvice();
  const warnings: ProfileWarning[] = [];
  const warn = (w: ProfileWarning) => void warnings.push(w);
  const units = discover(root);
  const label = (p: string) => relative(root, p) || basename(p);
  const kernels = new KernelAgg();
  const timeline = new TimelineAgg(rules.thresholds.dataloaderUs, kernels);
  let sawTimeline = false;
  const steps: StepBreakdown[] = [];
  const links: SlowLink[] = [];
  let bytes = 0;
  const total = units.reduce((a, u) => a + u.files.length, 0);
  let done = 0;
  const order: Role[] = ['kernels', 'opStatistic', 'steps', 'clusterSteps', 'clusterComm', 'trace'];
  // msprof-analyze writes cluster_analysis_output beside the rank folders it read: the ranks'
  // own step traces are then the same steps, so the cluster's table is not read twice
  const rankSteps = units.some(
    (u) => u.kind !== 'cluster' && u.files.some((f) => f.role === 'steps'),
  );
  for (const u of units) {
    const filesBefore = kernels.files;
    u.files.sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role));
    for (const f of u.files) {
      opts.signal?.throwIfAborted();
      opts.onFile?.(done++, total, label(f.path));
      const l = label(f.path);
      if (f.role === 'kernels')
        bytes += await readKernelTable(f.path, l, kernels, warn, opts.signal, opts.parser);
      // op_statistic.csv only stands in for a kernel table that is absent or unreadable
      else if (f.role === 'opStatistic' && kernels.files === filesBefore)
        bytes += await readOpStatistic(f.path, l, kernels, warn, opts.signal, opts.parser);
      else if (f.role === 'steps' || (f.role === 'clusterSteps' && !rankSteps)) {
        const r = await readStepTrace(f.path, l, u.rank, warn, opts.parser);
        steps.push(...r.steps);
        bytes += r.bytes;
      } else if (f.role === 'clusterComm') {
        const r = readClusterCommunication(f.path, l, warn);
        links.push(...r.links);
        bytes += r.bytes;
      } else if (f.role === 'trace') {
        sawTimeline = true;
        timeline.file = l;
        const r = await streamTrace(
          f.path,
          l,
          warn,
          (e) => timeline.add(e, u.rank),
          opts.signal,
          opts.parser,
        );
        timeline.events += r.events;
        bytes += r.bytes;
      }
    }
  }
  // the folder itself is where nothing was found (a `.` read as a stray full stop)
  if (!units.length) warn({ file: root, line: null, message: m('warn.nothing') });
  // a torch_npu rank folder always has these two (a half-copied folder does not)
  for (const u of units) {
    if (!u.files.some((f) => basename(dirname(f.path)) === 'ASCEND_PROFILER_OUTPUT')) continue;
    for (const file of ['kernel_details.csv', 'step_trace_time.csv'])
      if (!u.files.some((f) => basename(f.path) === file))
        warn({
          file: label(join(u.dir, 'ASCEND_PROFILER_OUTPUT')),
          line: null,
          message: m('warn.missingFile', { file }),
        });
  }
  // several rank folders, one of which has no rank: say so (a half-copied cluster)
  const rankless = units.filter((u) => u.rank === null && u.kind !== 'cluster');
  if (units.length > 1 && rankless.length)
    warn({ file: label(rankless[0]!.dir), line: null, message: m('warn.noRank') });
  const ranks: ProfileRank[] = units.map((u) => ({
    rank: u.rank,
    dir: relative(root, u.dir) || '.',
    kind: u.kind,
    files: u.files.map((f) => relative(u.dir, f.path)),
  }));
  const present = new Set(units.map((u) => u.rank).filter((r): r is number => r !== null));
  const cluster = units.some((u) => u.kind === 'cluster');
  if (!cluster && present.size > 1) {
    const max = Math.max(...present);
    const missing = Array.from({ length: max + 1 }, (_, i) => i).filter((i) => !present.has(i));
    if (missing.length)
      warn({
        file: '.',
        line: null,
        message: m('warn.missingRanks', { ranks: missing.join(', ') }),
      });
  }
  const kinds = new Set(units.map((u) => u.kind));
  const kind: ProfileKind = !units.length ? 'empty' : kinds.size === 1 ? [...kinds][0]! : 'mixed';
  const stepTimes: StepTime[] = steps.length
    ? steps.map((s) => ({ rank: s.rank, step: s.step, us: s.totalUs }))
    : timeline.stepTimes;
  const slow = slowRanks(steps);
  const result: ProfileResult = {
    source: root,
    kind,
    ranks,
    kernels: kernels.summary(rules.thresholds.topN),
    steps,
    stepTimes,
    timeline: sawTimeline
      ? {
          events: timeline.events,
          opCompile: timeline.opCompile,
          slowDataloader: timeline.slowDataloader,
          processes: [...timeline.processes],
          ops: [...timeline.ops]
            .sort((a, b) => b[1].us - a[1].us)
            .slice(0, 200)
            .map(([name, v]) => ({ name, ...v })),
          stepWindows: timeline.windows.list(),
        }
      : null,
    communication: slow.length || links.length ? { slowRank: slow, slowLink: links } : null,
    env: envOf(units),
    advice: [],
    warnings,
    bytes,
  };
  result.advice = adviseProfile(result, rules);
  return result;
}
