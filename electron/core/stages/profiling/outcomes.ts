import type { CheckOutcome } from '../../../../shared/api';
import type { ProfileResult } from '../../../../shared/stages/profiling/api';
import type { AdviceRules } from './advice';
import { stepBasis } from './advice';
import { meanStepUs } from './compare';
import { m } from './csv-stream';

/** The GPU step time the project was created with (its baseline), in ms, if it has one. */
export function projectStepMs(
  sessions: {
    session(id: number): { project: string | null };
    project(name: string): { baseline: { stepTimeMs?: number } | null };
  },
  sessionId: number,
): number | null {
  const name = sessions.session(sessionId).project;
  return name ? (sessions.project(name).baseline?.stepTimeMs ?? null) : null;
}

export interface ProfilingFacts {
  result: ProfileResult | null;
  /** The profiled run itself failed (the user's code). */
  error: { type: string; message: string; traceback: string } | null;
  /** What ran: torch_npu.profiler, or torch.profiler as the stand-in. */
  profiler: string | null;
  entry: string;
  host: string;
  steps: number;
  baseline: ProfileResult | null;
  /** The project's GPU baseline step time (projects.create baseline.stepTimeMs), when no run is given. */
  projectStepMs?: number | null;
  targetRatio: number | null;
}

const TITLE = {
  'prof.run': m('title.run'),
  'prof.aicpu': m('title.aicpu'),
  'prof.free': m('title.free'),
  'prof.dynamic-shapes': m('title.dynamic'),
  'prof.communication': m('title.communication'),
  'prof.step-time': m('title.stepTime'),
};
type Id = keyof typeof TITLE;
export const PROFILING_CHECK_IDS = Object.keys(TITLE) as Id[];

const pct = (x: number) => Math.round(x * 10000) / 100;
const out = (
  id: Id,
  status: CheckOutcome['status'],
  summary: CheckOutcome['summary'],
  evidence: unknown = null,
  remediation: CheckOutcome['remediation'] = null,
): CheckOutcome => ({ id, title: TITLE[id], status, summary, evidence, remediation });

/** The stage's checks, pure over the facts: the run, then what the profile says. */
export function profilingOutcomes(f: ProfilingFacts, rules: AdviceRules): CheckOutcome[] {
  const r = f.result;
  if (f.error || !r) {
    const skip = (id: Id) => out(id, 'skip', m('check.nothing'));
    return [
      out(
        'prof.run',
        'fail',
        f.error
          ? m('check.failed', { type: f.error.type, message: f.error.message })
          : m('check.nothing'),
        f.error ? { traceback: f.error.traceback } : null,
        m('check.fixEntry'),
      ),
      skip('prof.aicpu'),
      skip('prof.free'),
      skip('prof.dynamic-shapes'),
      skip('prof.communication'),
      skip('prof.step-time'),
    ];
  }
  const c = rules.checks;
  const advice = (id: string) => r.advice.find((a) => a.id === id);
  const basis = stepBasis(r);
  const stepsUs = r.steps.reduce((a, s) => a + s.totalUs, 0);
  const results: CheckOutcome[] = [];
  const empty = !r.ranks.length;
  results.push(
    out(
      'prof.run',
      empty ? 'fail' : r.warnings.length ? 'warn' : 'pass',
      empty
        ? m('check.nothing')
        : m('check.imported', {
            ranks: r.ranks.length,
            kind: r.kind,
            kernels: r.kernels?.count ?? 0,
            steps: r.steps.length,
            advice: r.advice.length,
            warnings: r.warnings.length,
          }),
      {
        profiler: f.profiler,
        ranks: r.ranks.map((x) => ({ rank: x.rank, dir: x.dir, kind: x.kind })),
        warnings: r.warnings.slice(0, 50),
        ...(f.profiler && f.profiler !== 'torch_npu.profiler'
          ? { standIn: m('warn.standIn') }
          : {}),
      },
    ),
  );
  // AI CPU
  if (!r.kernels || !basis) results.push(out('prof.aicpu', 'skip', m('check.nothing')));
  else {
    const us = r.kernels.aicpuOps.reduce((a, o) => a + o.us, 0);
    const share = us / basis.us;
    results.push(
      out(
        'prof.aicpu',
        share > c.aicpuShare ? 'warn' : 'pass',
        us
          ? m('check.aicpu', { percent: pct(share), limit: pct(c.aicpuShare) })
          : m('check.noAicpu'),
        { us, share, basis: basis.basis, ops: r.kernels.aicpuOps },
        share > c.aicpuShare ? (advice('aicpu')?.suggestion ?? null) : null,
      ),
    );
  }
  // free and uncovered communication, from the step breakdown
  for (const [id, key, limit, adviceId, msgKey] of [
    ['prof.free', 'freeUs', c.freeShare, 'overall.free', 'check.free'],
    [
      'prof.communication',
      'communicationNotOverlappedUs',
      c.communicationShare,
      'communication.uncovered',
      'check.communication',
    ],
  ] as const) {
    if (!stepsUs) {
      results.push(out(id, 'skip', m('check.noSteps')));
      continue;
    }
    const us = r.steps.reduce((a, s) => a + s[key], 0);
    const share = us / stepsUs;
    results.push(
      out(
        id,
        share > limit ? 'warn' : 'pass',
        m(msgKey, { percent: pct(share), limit: pct(limit) }),
        { us, stepUs: stepsUs, share },
        share > limit ? (advice(adviceId)?.suggestion ?? null) : null,
      ),
    );
  }
  // dynamic shapes
  const s = r.kernels?.opState;
  if (!s) results.push(out('prof.dynamic-shapes', 'skip', m('check.noState')));
  else {
    const all = s.static === 0 && s.dynamic > 0;
    results.push(
      out(
        'prof.dynamic-shapes',
        all ? 'warn' : 'pass',
        all
          ? m('check.dynamic', { count: s.dynamic })
          : m('check.static', { static: s.static, dynamic: s.dynamic }),
        s,
        all ? (advice('dynamic-shape')?.suggestion ?? null) : null,
      ),
    );
  }
  // step time against the GPU baseline
  const npu = meanStepUs(r);
  const gpu = f.baseline ? meanStepUs(f.baseline) : f.projectStepMs ? f.projectStepMs * 1000 : null;
  if (!f.baseline && !f.projectStepMs)
    results.push(out('prof.step-time', 'skip', m('check.noBaseline')));
  else if (npu === null || !gpu) results.push(out('prof.step-time', 'skip', m('check.noSteps')));
  else {
    const target = f.targetRatio ?? c.stepTimeRatio;
    const ratio = npu / gpu;
    results.push(
      out(
        'prof.step-time',
        ratio > target ? 'fail' : 'pass',
        m('check.stepTime', {
          npuMs: Math.round(npu / 10) / 100,
          gpuMs: Math.round(gpu / 10) / 100,
          ratio: Math.round(ratio * 100) / 100,
          target,
        }),
        {
          npuUs: npu,
          gpuUs: gpu,
          ratio,
          target,
          baseline: f.baseline ? f.baseline.source : 'project baseline (stepTimeMs)',
        },
        ratio > target ? (r.advice[0]?.suggestion ?? null) : null,
      ),
    );
  }
  return results;
}
