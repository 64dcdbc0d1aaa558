import type { CheckOutcome } from '../../../../shared/api';
import type { OpsResult } from '../../../../shared/stages/ops/api';
import { msg } from '../../../../shared/api/text';

const m = (key: string, params?: Parameters<typeof msg>[1]) => msg(`stage-ops:${key}`, params);

const TITLE = {
  'ops.trace': m('title.trace'),
  'ops.unsupported': m('title.unsupported'),
  'ops.cpu-fallback': m('title.fallback'),
  'ops.needs-change': m('title.change'),
  'ops.dynamic-shapes': m('title.dynamic'),
};

/** The stage's checks: what blocks, what is slow, what is shape-dynamic; evidence is the table. */
export function opsOutcomes(r: OpsResult): CheckOutcome[] {
  if (r.error) {
    const skip = (id: keyof typeof TITLE): CheckOutcome => ({
      id,
      title: TITLE[id],
      status: 'skip',
      summary: m('notEvaluated'),
      evidence: null,
      remediation: null,
    });
    return [
      {
        id: 'ops.trace',
        title: TITLE['ops.trace'],
        status: 'fail',
        summary: m('modelFailed', { type: r.error.type, message: r.error.message }),
        evidence: { traceback: r.error.traceback, phase: r.error.phase ?? null },
        remediation: m('fixEntry'),
      },
      skip('ops.unsupported'),
      skip('ops.cpu-fallback'),
      skip('ops.needs-change'),
      skip('ops.dynamic-shapes'),
    ];
  }
  const list = (cls: string) =>
    r.ops
      .filter((o) => o.class === cls)
      .map((o) => ({ op: o.op, overload: o.overload, count: o.count, reason: o.reason }));
  const dynamic = r.ops.filter((o) => o.dynamic);
  const b = r.breakdown;
  const target = r.targetTorchNpu;
  const counted = (
    id: keyof typeof TITLE,
    count: number,
    status: 'fail' | 'warn',
    key: string,
    fix: string,
    evidence: unknown,
  ): CheckOutcome => ({
    id,
    title: TITLE[id],
    status: count ? status : 'pass',
    summary: count ? m(key, { count, target }) : m('none'),
    evidence,
    remediation: count ? m(fix) : null,
  });
  return [
    {
      id: 'ops.trace',
      title: TITLE['ops.trace'],
      status: 'pass',
      summary: m('traced', {
        total: r.ops.length,
        batches: r.batches,
        direct: b.direct,
        needsChange: b.needsChange,
        cpuFallback: b.cpuFallback,
        unsupported: b.unsupported,
        target,
        opList: r.opList,
      }),
      evidence: { breakdown: b, torch: r.torch, opList: r.opList, note: r.opListNote },
      remediation: null,
    },
    counted(
      'ops.unsupported',
      b.unsupported,
      'fail',
      'unsupported',
      'unsupportedFix',
      list('unsupported'),
    ),
    counted(
      'ops.cpu-fallback',
      b.cpuFallback,
      'warn',
      'fallback',
      'fallbackFix',
      list('cpu-fallback'),
    ),
    counted('ops.needs-change', b.needsChange, 'warn', 'change', 'changeFix', list('needs-change')),
    {
      id: 'ops.dynamic-shapes',
      title: TITLE['ops.dynamic-shapes'],
      status: dynamic.length ? 'warn' : 'pass',
      summary: dynamic.length
        ? m('dynamic', {
            count: dynamic.length,
            inputs: r.variableInputs.length
              ? r.variableInputs.map((v) =>
                  m('variableInput', { arg: v.arg, dims: v.dims.map(String) }),
                )
              : m('noneNamed'),
          })
        : m('static'),
      evidence: {
        variableInputs: r.variableInputs,
        ops: dynamic.slice(0, 50).map((o) => ({ op: o.op, shapes: o.shapes.slice(0, 6) })),
      },
      remediation: dynamic.length ? m('dynamicFix') : null,
    },
  ];
}
