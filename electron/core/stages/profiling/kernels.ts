import type { KernelSummary, ProfileWarning } from '../../../../shared/stages/profiling/api';
import { col, m, num, streamCsv, type ParserChoice } from './csv-stream';

/**
 * The kernel table in either vocabulary (knowledge §2.2): torch_npu's kernel_details.csv
 * (Name, Type, Accelerator Core, Duration(us)) and msprof's op_summary_*.csv (Op Name, OP Type,
 * Task Type, Task Duration(us)), folded into one summary as rows stream by.
 */
interface Acc {
  us: number;
  count: number;
}

/** One (name, op type, task type) and the accumulators its rows add to, found by name in one lookup. */
interface NameEntry extends Acc {
  opType: string;
  taskType: string;
  task: Acc;
  op: Acc;
  aicpu: Acc | null;
  /** Another entry of the same name (a name with several op or task types: rare). */
  next: NameEntry | null;
}

export class KernelAgg {
  count = 0;
  totalUs = 0;
  maxUs = 0;
  files = 0;
  private byTask = new Map<string, Acc>();
  private byOp = new Map<string, Acc & { taskType: string }>();
  private byName = new Map<string, NameEntry>();
  private aicpu = new Map<string, Acc>();
  private states: { dynamic: number; static: number; other: number } | null = null;

  add(name: string, opType: string, taskType: string, us: number | null, state: string | null) {
    this.count++;
    const d = us ?? 0;
    this.totalUs += d;
    if (d > this.maxUs) this.maxUs = d;
    // rows repeat a few hundred names: one map lookup by name finds every accumulator of the row
    let e = this.byName.get(name) ?? null;
    const first = e;
    while (e !== null && (e.opType !== opType || e.taskType !== taskType)) e = e.next;
    if (e === null) {
      e = this.entry(opType, taskType, first);
      this.byName.set(name, e);
    }
    e.us += d;
    e.count++;
    e.task.us += d;
    e.task.count++;
    e.op.us += d;
    e.op.count++;
    if (e.aicpu) {
      e.aicpu.us += d;
      e.aicpu.count++;
    }
    if (state !== null) {
      this.states ??= { dynamic: 0, static: 0, other: 0 };
      const s = state.trim().toLowerCase();
      if (s === 'dynamic') this.states.dynamic++;
      else if (s === 'static') this.states.static++;
      else this.states.other++;
    }
  }

  private entry(opType: string, taskType: string, next: NameEntry | null): NameEntry {
    let task = this.byTask.get(taskType);
    if (!task) this.byTask.set(taskType, (task = { us: 0, count: 0 }));
    // an op type keeps the task type of its first row
    let op = this.byOp.get(opType);
    if (!op) this.byOp.set(opType, (op = { us: 0, count: 0, taskType }));
    let aicpu: Acc | null = null;
    if (taskType === 'AI_CPU') {
      aicpu = this.aicpu.get(opType) ?? null;
      if (!aicpu) this.aicpu.set(opType, (aicpu = { us: 0, count: 0 }));
    }
    return { us: 0, count: 0, opType, taskType, task, op, aicpu, next };
  }

  /** op_statistic.csv rows, when a folder has no kernel table (counts and totals per op type). */
  addStatistic(opType: string, taskType: string, count: number, us: number) {
    this.count += count;
    this.totalUs += us;
    const t = this.byTask.get(taskType) ?? { us: 0, count: 0 };
    t.us += us;
    t.count += count;
    this.byTask.set(taskType, t);
    const o = this.byOp.get(opType) ?? { us: 0, count: 0, taskType };
    o.us += us;
    o.count += count;
    this.byOp.set(opType, o);
  }

  /** Every (name, op type, task type) keyed as the summary sorts them (name, op, task joined by NUL). */
  private names(): [string, Acc][] {
    const out: [string, Acc][] = [];
    for (const [name, head] of this.byName)
      for (let e: NameEntry | null = head; e; e = e.next)
        out.push([`${name}\u0000${e.opType}\u0000${e.taskType}`, e]);
    return out;
  }

  summary(topN: number): KernelSummary | null {
    if (!this.count && !this.files) return null;
    const share = (us: number) => (this.totalUs > 0 ? us / this.totalUs : 0);
    const sorted = <V extends { us: number }>(map: Map<string, V>) =>
      [...map].sort((a, b) => b[1].us - a[1].us || a[0].localeCompare(b[0]));
    return {
      count: this.count,
      totalUs: this.totalUs,
      byTaskType: Object.fromEntries(
        sorted(this.byTask).map(([k, v]) => [k, { us: v.us, share: share(v.us), count: v.count }]),
      ),
      byOpType: Object.fromEntries(
        sorted(this.byOp).map(([k, v]) => [
          k,
          { us: v.us, share: share(v.us), count: v.count, taskType: v.taskType },
        ]),
      ),
      top: this.names()
        .sort((a, b) => b[1].us - a[1].us || a[0].localeCompare(b[0]))
        .slice(0, topN)
        .map(([k, v]) => {
          const [name, opType, taskType] = k.split('\u0000') as [string, string, string];
          return { name, opType, taskType, us: v.us, count: v.count };
        }),
      opState: this.states,
      aicpuOps: sorted(this.aicpu).map(([opType, v]) => ({ opType, ...v })),
      maxUs: this.maxUs,
    };
  }
}

/** Reads one kernel table into `agg`; an unknown column set is a warning and nothing read. */
export async function readKernelTable(
  path: string,
  label: string,
  agg: KernelAgg,
  warn: (w: ProfileWarning) => void,
  signal?: AbortSignal,
  parser?: ParserChoice,
): Promise<number> {
  let iName = -1;
  let iType = -1;
  let iTask = -1;
  let iDur = -1;
  let iState = -1;
  const r = await streamCsv(
    path,
    label,
    warn,
    (h) => {
      iName = col(h, 'Name', 'Op Name');
      iType = col(h, 'Type', 'OP Type');
      iTask = col(h, 'Accelerator Core', 'Task Type');
      iDur = col(h, 'Duration(us)', 'Task Duration(us)');
      iState = col(h, 'OP State');
      if (iName < 0 || iDur < 0) {
        warn({
          file: label,
          line: 1,
          message: m('warn.unknownColumns', { columns: h.slice(0, 8).join(', ') }),
        });
        return false;
      }
      agg.files++;
      return [iName, iType, iTask, iDur, iState];
    },
    ({ fields }) => {
      agg.add(
        fields[iName] ?? '',
        iType >= 0 ? (fields[iType] ?? 'N/A') : 'N/A',
        iTask >= 0 ? (fields[iTask] ?? 'N/A') : 'N/A',
        num(fields[iDur]),
        iState >= 0 ? (fields[iState] ?? '') : null,
      );
    },
    signal,
    parser,
  );
  return r.bytes;
}

/** op_statistic.csv (with or without Device_id) as a stand-in for a missing kernel table. */
export async function readOpStatistic(
  path: string,
  label: string,
  agg: KernelAgg,
  warn: (w: ProfileWarning) => void,
  signal?: AbortSignal,
  parser?: ParserChoice,
): Promise<number> {
  let iType = -1;
  let iCore = -1;
  let iCount = -1;
  let iTotal = -1;
  const r = await streamCsv(
    path,
    label,
    warn,
    (h) => {
      iType = col(h, 'OP Type');
      iCore = col(h, 'Core Type');
      iCount = col(h, 'Count');
      iTotal = col(h, 'Total Time(us)');
      if (iType < 0 || iTotal < 0) {
        warn({
          file: label,
          line: 1,
          message: m('warn.unknownColumns', { columns: h.slice(0, 8).join(', ') }),
        });
        return false;
      }
      agg.files++;
      return [iType, iCore, iCount, iTotal];
    },
    ({ fields }) =>
      agg.addStatistic(
        fields[iType] ?? '',
        iCore >= 0 ? (fields[iCore] ?? 'N/A') : 'N/A',
        num(fields[iCount]) ?? 0,
        num(fields[iTotal]) ?? 0,
      ),
    signal,
    parser,
  );
  return r.bytes;
}
