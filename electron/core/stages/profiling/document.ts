import type { Text } from '../../../../shared/api';
import type { ProfileResult } from '../../../../shared/stages/profiling/api';

/** The documented `--json` document of an import or a run (texts in the CLI's language). */
export function profileDocument(r: ProfileResult, show: (t: Text) => string) {
  return {
    source: r.source,
    kind: r.kind,
    ranks: r.ranks,
    kernels: r.kernels
      ? {
          count: r.kernels.count,
          totalUs: r.kernels.totalUs,
          byTaskType: Object.fromEntries(
            Object.entries(r.kernels.byTaskType).map(([k, v]) => [k, { us: v.us, share: v.share }]),
          ),
          byOpType: Object.fromEntries(
            Object.entries(r.kernels.byOpType).map(([k, v]) => [
              k,
              { us: v.us, share: v.share, count: v.count, taskType: v.taskType },
            ]),
          ),
          top: r.kernels.top,
        }
      : null,
    steps: r.steps.map((s) => ({
      rank: s.rank,
      step: s.step,
      computingUs: s.computingUs,
      communicationNotOverlappedUs: s.communicationNotOverlappedUs,
      overlappedUs: s.overlappedUs,
      freeUs: s.freeUs,
      bubbleUs: s.bubbleUs,
    })),
    stepTimes: r.stepTimes,
    advice: r.advice.map((a) => ({
      id: a.id,
      severity: a.severity,
      message: show(a.message),
      suggestion: show(a.suggestion),
      share: a.share,
      evidence: a.evidence,
    })),
    warnings: r.warnings.map((w) => ({ file: w.file, line: w.line, message: show(w.message) })),
  };
}
