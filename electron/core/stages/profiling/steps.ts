import { readFileSync, statSync } from 'node:fs';
import type {
  ProfileWarning,
  SlowLink,
  SlowRankDimension,
  StepBreakdown,
} from '../../../../shared/stages/profiling/api';
import { col, m, num, streamCsv, type ParserChoice } from './csv-stream';

/**
 * step_trace_time.csv (per rank; 9, 10 or 11 columns: Preparing and Device_id come and go) and
 * msprof-analyze's cluster_step_trace_time.csv (Type rank|stage, Index) as step breakdowns.
 * Stage rows of the cluster table (maxima within a PP stage) are not ranks and are left out.
 */
export async function readStepTrace(
  path: string,
  label: string,
  rank: number | null,
  warn: (w: ProfileWarning) => void,
  parser?: ParserChoice,
): Promise<{ steps: StepBreakdown[]; bytes: number }> {
  const steps: StepBreakdown[] = [];
  const ix: Record<string, number> = {};
  const r = await streamCsv(
    path,
    label,
    warn,
    (h) => {
      ix.step = col(h, 'Step', 'Iteration ID');
      ix.type = col(h, 'Type');
      ix.index = col(h, 'Index');
      ix.device = col(h, 'Device_id');
      ix.computing = col(h, 'Computing');
      ix.notOverlapped = col(h, 'Communication(Not Overlapped)');
      ix.overlapped = col(h, 'Overlapped');
      ix.free = col(h, 'Free');
      ix.bubble = col(h, 'Bubble');
      ix.preparing = col(h, 'Preparing');
      if (ix.computing < 0 || ix.notOverlapped < 0 || ix.free < 0) {
        warn({
          file: label,
          line: 1,
          message: m('warn.unknownColumns', { columns: h.slice(0, 8).join(', ') }),
        });
        return false;
      }
      return true;
    },
    ({ fields, line }) => {
      const get = (k: string) => (ix[k]! >= 0 ? num(fields[ix[k]!]) : null);
      if (ix.type! >= 0 && fields[ix.type!]?.trim() !== 'rank') return;
      const computingUs = get('computing');
      const notOverlapped = get('notOverlapped');
      const freeUs = get('free');
      if (computingUs === null || notOverlapped === null || freeUs === null) {
        warn({ file: label, line, message: m('warn.badStep') });
        return;
      }
      const rowRank = ix.index! >= 0 ? num(fields[ix.index!]) : rank;
      steps.push({
        rank: rowRank,
        step: get('step'),
        computingUs,
        communicationNotOverlappedUs: notOverlapped,
        overlappedUs: get('overlapped') ?? 0,
        freeUs,
        bubbleUs: get('bubble') ?? 0,
        preparingUs: get('preparing'),
        totalUs: computingUs + notOverlapped + freeUs,
      });
    },
    undefined,
    parser,
  );
  return { steps, bytes: r.bytes };
}

const DIMENSIONS = [
  ['computing', 'computingUs'],
  ['communication', 'communicationNotOverlappedUs'],
  ['free', 'freeUs'],
] as const;

/**
 * msprof-analyze's slow-rank rule (advisor/analyzer/cluster/slow_rank_analyzer.py): per step and
 * per dimension, (max - min) over the mean step time of the ranks. Every dimension is returned;
 * the advice decides which exceed the threshold.
 */
export function slowRanks(steps: StepBreakdown[]): SlowRankDimension[] {
  const bySteps = new Map<number | null, StepBreakdown[]>();
  for (const s of steps)
    if (s.rank !== null) bySteps.set(s.step, [...(bySteps.get(s.step) ?? []), s]);
  const out: SlowRankDimension[] = [];
  for (const [step, rows] of bySteps) {
    if (new Set(rows.map((r) => r.rank)).size < 2) continue;
    const mean = rows.reduce((a, r) => a + r.totalUs, 0) / rows.length;
    if (mean <= 0) continue;
    for (const [dimension, key] of DIMENSIONS) {
      let max = rows[0]!;
      let min = rows[0]!;
      for (const r of rows) {
        if (r[key] > max[key]) max = r;
        if (r[key] < min[key]) min = r;
      }
      out.push({
        step,
        dimension,
        maxRank: max.rank!,
        minRank: min.rank!,
        maxUs: max[key],
        minUs: min[key],
        ratio: (max[key] - min[key]) / mean,
      });
    }
  }
  return out;
}

type BandwidthInfo = Record<string, { 'Transit Size(MB)'?: number; 'Transit Time(ms)'?: number }>;
type ClusterComm = Record<
  string,
  Record<string, Record<string, Record<string, { 'Communication Bandwidth Info'?: BandwidthInfo }>>>
>;

/** SDMA is on-node traffic: HCCS, PCIE and SIO, as msprof-analyze's slow-link analyzer adds them. */
const SDMA_PARTS = ['HCCS', 'PCIE', 'SIO'];
const MAX_JSON_BYTES = 512 * 2 ** 20;

/**
 * cluster_communication.json: each rank's RDMA and SDMA bandwidth (transit size over transit time,
 * summed over every group's "Total Op Info" of every step), and how far apart the ranks are.
 */
export function readClusterCommunication(
  path: string,
  label: string,
  warn: (w: ProfileWarning) => void,
): { links: SlowLink[]; bytes: number } {
  const bytes = statSync(path).size;
  if (bytes === 0) {
    warn({ file: label, line: null, message: m('warn.empty') });
    return { links: [], bytes };
  }
  if (bytes > MAX_JSON_BYTES) {
    warn({ file: label, line: null, message: m('warn.tooLarge', { mb: Math.round(bytes / 1e6) }) });
    return { links: [], bytes };
  }
  let doc: ClusterComm;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as ClusterComm;
  } catch (err) {
    warn({
      file: label,
      line: null,
      message: m('warn.badJson', { error: (err as Error).message.slice(0, 200) }),
    });
    return { links: [], bytes };
  }
  const per = new Map<string, Map<number, { mb: number; ms: number }>>([
    ['RDMA', new Map()],
    ['SDMA', new Map()],
  ]);
  const addTo = (kind: string, rank: number, mb: number, ms: number) => {
    const acc = per.get(kind)!.get(rank) ?? { mb: 0, ms: 0 };
    acc.mb += mb;
    acc.ms += ms;
    per.get(kind)!.set(rank, acc);
  };
  for (const steps of Object.values(doc ?? {}))
    for (const ops of Object.values(steps ?? {})) {
      // a group's "Total Op Info" sums its ops; without it, the ops themselves are summed
      const entries = ops?.['Total Op Info'] ? [ops['Total Op Info']] : Object.values(ops ?? {});
      for (const byRank of entries)
        for (const [rankKey, info] of Object.entries(byRank ?? {})) {
          const rank = Number(rankKey);
          if (!Number.isInteger(rank)) continue;
          const b = info?.['Communication Bandwidth Info'] ?? {};
          const size = (t: string) => b[t]?.['Transit Size(MB)'] ?? 0;
          const time = (t: string) => b[t]?.['Transit Time(ms)'] ?? 0;
          if (b.RDMA) addTo('RDMA', rank, size('RDMA'), time('RDMA'));
          // SDMA is the on-node sum (HCCS, PCIE, SIO) when the file has it, else summed here
          if (time('SDMA') > 0) addTo('SDMA', rank, size('SDMA'), time('SDMA'));
          else
            addTo(
              'SDMA',
              rank,
              SDMA_PARTS.reduce((a, t) => a + size(t), 0),
              SDMA_PARTS.reduce((a, t) => a + time(t), 0),
            );
        }
    }
  const links: SlowLink[] = [];
  for (const [transport, ranks] of per) {
    const bw = [...ranks]
      .filter(([, v]) => v.ms > 0)
      .map(([rank, v]) => ({ rank, gbps: v.mb / v.ms }));
    if (bw.length < 2) continue;
    const mean = bw.reduce((a, b) => a + b.gbps, 0) / bw.length;
    const max = bw.reduce((a, b) => (b.gbps > a.gbps ? b : a));
    const min = bw.reduce((a, b) => (b.gbps < a.gbps ? b : a));
    links.push({
      transport: transport as SlowLink['transport'],
      maxRank: max.rank,
      minRank: min.rank,
      maxGBps: max.gbps,
      minGBps: min.gbps,
      meanGBps: mean,
      ratio: mean > 0 ? (max.gbps - min.gbps) / mean : 0,
    });
  }
  return { links, bytes };
}
