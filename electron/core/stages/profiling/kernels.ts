import type { KernelSummary, ProfileWarning } from '../../../../shared/stages/profiling/api';
import { col, m, num, streamCsv } from './csv-stream';

/**
 * The kernel table in either vocabulary (knowledge §2.2): torch_npu's kernel_details.csv
 * (Name, Type, Accelerator Core, Duration(us)) and msprof's op_summary_*.csv (Op Name, OP Type,
 * Task Type, Task Duration(us)), folded into one summary as rows stream by.
 */
export class KernelAgg {
  count = 0;
  totalUs = 0;
  maxUs = 0;
  files = 0;
  private byTask = new Map<string, { us: number; count: number }>();
  private byOp = new Map<string, { us: number; count: number; taskType: string }>();
  private byName = new Map<string, { us: number; count: number }>();
  private aicpu = new Map<string, { us: number; count: number }>();
  private states: { dynamic: number; static: number; other: number } | null = null;

  add(name: string, opType: string, taskType: string, us: number | null, state: string | null) {
    this.count++;
    const d = us ?? 0;
    this.totalUs += d;
    if (d > this.maxUs) this.maxUs = d;
    const t = this.byTask.get(taskType);
    if (t) {
      t.us += d;
      t.count++;
    } else this.byTask.set(taskType, { us: d, count: 1 });
    const o = this.byOp.get(opType);
    if (o) {
      o.us += d;
      o.count++;
    } else this.byOp.set(opType, { us: d, count: 1, taskType });
    if (taskType === 'AI_CPU') {
      const a = this.aicpu.get(opType) ?? { us: 0, count: 0 };
      a.us += d;
      a.count++;
      this.aicpu.set(opType, a);
    }
    const key = `${name}\u0000${opType}\u0000${taskType}`;
    const n = this.byName.get(key);
    if (n) {
      n.us += d;
      n.count++;
    } else this.byName.set(key, { us: d, count: 1 });
    if (state !== null) {
      this.states ??= { dynamic: 0, static: 0, other: 0 };
      const s = state.trim().toLowerCase();
      if (s === 'dynamic') this.states.dynamic++;
      else if (s === 'static') this.states.static++;
      else this.states.other++;
    }
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
      top: sorted(this.byName)
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
      return true;
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
  );
  return r.bytes;
}

/** op_statistic.csv (with or without Device_id) as a stand-in for a missing kernel table. */
export async function readOpStatistic(
  path: string,
  label: string,
  agg: KernelAgg,
  warn: (w: ProfileWarning) => void,
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
      return true;
    },
    ({ fields }) =>
      agg.addStatistic(
        fields[iType] ?? '',
        iCore >= 0 ? (fields[iCore] ?? 'N/A') : 'N/A',
        num(fields[iCount]) ?? 0,
        num(fields[iTotal]) ?? 0,
      ),
  );
  return r.bytes;
}
