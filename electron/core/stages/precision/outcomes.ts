import type { CheckOutcome, CheckStatus } from '../../../../shared/api';
import { msg, type Msg } from '../../../../shared/api/text';
import type { PrecisionCompareResult, RawDump } from '../../../../shared/stages/precision/api';

const m = (key: string, params?: Parameters<typeof msg>[1]) =>
  msg(`stage-precision:${key}`, params);

export const CHECK_IDS = [
  'precision.dump',
  'precision.determinism',
  'precision.amp-policy',
  'precision.loss-scale',
  'precision.first-divergence',
  'precision.overflow',
] as const;
type CheckId = (typeof CHECK_IDS)[number];

const TITLE: Record<CheckId, Msg> = {
  'precision.dump': m('title.run'),
  'precision.determinism': m('title.determinism'),
  'precision.amp-policy': m('title.ampPolicy'),
  'precision.loss-scale': m('title.lossScale'),
  'precision.first-divergence': m('title.firstDivergence'),
  'precision.overflow': m('title.overflow'),
};

const out = (
  id: CheckId,
  status: CheckStatus,
  summary: Msg,
  evidence: unknown = null,
  remediation: Msg | null = null,
): CheckOutcome => ({ id, title: TITLE[id], status, summary, evidence, remediation });

/** What the checks read: both sides' dumps (as the harness printed them) and the comparison. */
export interface PrecisionFacts {
  host: string;
  baseline: string;
  baselineDump: RawDump;
  targetDump: RawDump;
  result: PrecisionCompareResult | null;
}

/** A side failed in the user's code: that side's traceback is the evidence, the rest skip. */
export function failedOutcomes(f: PrecisionFacts): CheckOutcome[] {
  const side = f.baselineDump.error ? 'baseline' : 'target';
  const d = side === 'baseline' ? f.baselineDump : f.targetDump;
  const e = d.error!;
  return [
    out(
      'precision.dump',
      'fail',
      m('modelFailed', {
        side: m(`side.${side}`),
        host: side === 'baseline' ? f.baseline : f.host,
        type: e.type,
        message: e.text ?? e.message,
      }),
      { side, traceback: e.traceback, phase: e.phase ?? null },
      m('fixEntry'),
    ),
    ...CHECK_IDS.slice(1).map((id) => out(id, 'skip', m('notEvaluated'))),
  ];
}

export function precisionOutcomes(f: PrecisionFacts): CheckOutcome[] {
  if (f.baselineDump.error || f.targetDump.error || !f.result) return failedOutcomes(f);
  return [dump(f), determinism(f), ampPolicy(f), lossScale(f), divergence(f), overflow(f)];
}

function dump(f: PrecisionFacts): CheckOutcome {
  const r = f.result!;
  const t = f.targetDump;
  const onCpu = t.torchNpu && t.device === 'cpu';
  const dumped = m('dumped', {
    modules: r.modules.length,
    batches: t.batches,
    pass: r.counts.pass,
    warning: r.counts.warning,
    error: r.counts.error,
    baseline: f.baseline,
    baselineDevice: f.baselineDump.device,
    host: f.host,
    targetDevice: t.device,
    dtype: r.dtype,
  });
  const cpuNote = onCpu ? m('onCpu', { host: f.host, note: t.deviceNote ?? '' }) : null;
  const { notes, warn } = dumpNotes(f);
  const items = [dumped, ...(cpuNote ? [cpuNote] : []), ...notes];
  return out(
    'precision.dump',
    warn ? 'warn' : 'pass',
    items.length > 1 ? m('joined', { items }) : dumped,
    {
      baseline: {
        device: f.baselineDump.device,
        note: f.baselineDump.deviceNote,
        torch: f.baselineDump.torch ?? null,
        torchNpu: f.baselineDump.torchNpu ?? null,
        seconds: f.baselineDump.seconds ?? null,
      },
      target: {
        device: t.device,
        note: t.deviceNote,
        torch: t.torch ?? null,
        torchNpu: t.torchNpu ?? null,
        seconds: t.seconds ?? null,
      },
      onCpu: cpuNote,
      inputsSha256: t.loaded?.sha256 ?? null,
      script: !!t.script,
      opHooks: { baseline: f.baselineDump.opHooks ?? null, target: t.opHooks ?? null },
      tensorsDropped: {
        baseline: f.baselineDump.tensorsDropped ?? 0,
        target: t.tensorsDropped ?? 0,
      },
    },
  );
}

/**
 * What the run did differently from an entry run, and what it was asked for but could not do:
 * script mode's inputs, aten ops not recorded or never called, tensors past the byte cap.
 */
function dumpNotes(f: PrecisionFacts): { notes: Msg[]; warn: boolean } {
  const notes: Msg[] = [];
  let warn = false;
  const t = f.targetDump;
  if (t.script) notes.push(m('scriptMode', { steps: t.batches, seed: t.determinism.seed ?? '?' }));
  const hooks = [f.baselineDump.opHooks, t.opHooks].filter((h) => !!h);
  const note = hooks.find((h) => h.note)?.note;
  if (note) {
    notes.push(m('ops.unavailable', { note }));
    warn = true;
  } else if (t.opHooks) {
    const seen = new Set(hooks.flatMap((h) => h.seen));
    const want = t.opHooks.requested.map((o) => o.replace(/^aten::/, ''));
    if (seen.size) notes.push(m('ops.recorded', { seen: [...seen].join(', ') }));
    const unseen = want.filter((o) => !seen.has(o));
    if (unseen.length) {
      notes.push(m('ops.unseen', { ops: unseen.join(', ') }));
      warn = true;
    }
    const dropped = Math.max(...hooks.map((h) => h.dropped));
    if (dropped > 0) {
      notes.push(m('ops.dropped', { count: dropped }));
      warn = true;
    }
  }
  const dropped = Math.max(f.baselineDump.tensorsDropped ?? 0, t.tensorsDropped ?? 0);
  if (dropped > 0) {
    notes.push(m('tensorsDropped', { count: dropped }));
    warn = true;
  }
  return { notes, warn };
}

function determinism(f: PrecisionFacts): CheckOutcome {
  const issues: Msg[] = [];
  let seed: number | null = null;
  for (const [side, d] of [
    ['baseline', f.baselineDump],
    ['target', f.targetDump],
  ] as const) {
    const what: string[] = [];
    const x = d.determinism;
    seed ??= x.seed;
    if (x.seed === null) what.push('seed');
    if (x.torchDeterministic === false) what.push('torch.use_deterministic_algorithms');
    if (d.device === 'cuda' && x.cudnnDeterministic === false) what.push('cudnn.deterministic');
    if (d.device === 'npu' && x.npuDeterministic === false)
      what.push('torch_npu set_deterministic');
    if (what.length)
      issues.push(m('determinism.off', { side: m(`side.${side}`), what: what.join(', ') }));
    if (x.worldSize > 1 && x.hcclDeterministic !== '1')
      issues.push(m('determinism.hccl', { world: x.worldSize }));
  }
  return out(
    'precision.determinism',
    issues.length ? 'warn' : 'pass',
    issues.length
      ? issues.length === 1
        ? issues[0]!
        : m('joined', { items: issues })
      : m('determinism.on', { seed: seed ?? '?' }),
    { baseline: f.baselineDump.determinism, target: f.targetDump.determinism },
    issues.length ? m('determinism.fix') : null,
  );
}

function ampPolicy(f: PrecisionFacts): CheckOutcome {
  const t = f.targetDump;
  const dtype = f.result!.dtype;
  const evidence = {
    dtype,
    autocast: t.autocast,
    bf16Supported: t.bf16Supported,
    device: t.device,
    warnings: t.warnings.filter((w) => w.startsWith('autocast')),
  };
  if (dtype === 'fp32') return out('precision.amp-policy', 'pass', m('amp.fp32'), evidence);
  if (!t.autocast)
    return out(
      'precision.amp-policy',
      'fail',
      m('amp.unavailable', { dtype, device: t.device, why: evidence.warnings.join('; ') || '-' }),
      evidence,
      m('amp.cpuFix'),
    );
  if (dtype === 'bf16' && t.bf16Supported === false)
    return out('precision.amp-policy', 'fail', m('amp.noBf16'), evidence, m('amp.noBf16Fix'));
  if (t.torchNpu && t.autocast.device !== 'npu')
    return out(
      'precision.amp-policy',
      'warn',
      m('amp.cpuAutocast', { device: t.autocast.device }),
      evidence,
      m('amp.cpuFix'),
    );
  if (dtype === 'fp16' && t.bf16Supported)
    return out(
      'precision.amp-policy',
      'warn',
      m('amp.preferBf16', { device: t.autocast.device }),
      evidence,
      m('amp.preferBf16Fix'),
    );
  return out(
    'precision.amp-policy',
    'pass',
    m(dtype === 'bf16' ? 'amp.bf16' : 'amp.fp32', { device: t.autocast.device }),
    evidence,
  );
}

/** Seeds (001 §7.2): an fp16 GradScaler should start at 2^14; torch's default is 2^16. */
const RECOMMENDED_INIT = 2 ** 14;
function lossScale(f: PrecisionFacts): CheckOutcome {
  const dtype = f.result!.dtype;
  const gs = f.targetDump.gradScaler;
  const file = (f.targetDump.entry ?? '').split(':')[0] ?? '';
  if (dtype !== 'fp16')
    return gs?.found
      ? out('precision.loss-scale', 'pass', m('loss.unused', { at: gs.at ?? '?', dtype }), gs)
      : out('precision.loss-scale', 'pass', m('loss.notNeeded', { dtype }), gs);
  if (!gs?.found)
    return out('precision.loss-scale', 'warn', m('loss.missing', { file }), gs, m('loss.fix'));
  if (gs.initScale !== null && gs.initScale > RECOMMENDED_INIT)
    return out(
      'precision.loss-scale',
      'warn',
      m('loss.high', { init: gs.initScale, at: gs.at ?? '?' }),
      gs,
      m('loss.fix'),
    );
  return out(
    'precision.loss-scale',
    'pass',
    m('loss.ok', { init: gs.initScale ?? '?', at: gs.at ?? '?' }),
    gs,
  );
}

function divergence(f: PrecisionFacts): CheckOutcome {
  const r = f.result!;
  const first = r.firstDivergence;
  const unmatched = r.unmatched.length
    ? m('divergence.unmatched', {
        count: r.unmatched.length,
        names: r.unmatched
          .slice(0, 5)
          .map((u) => `${u.module} (${u.side})`)
          .join(', '),
      })
    : null;
  if (!first)
    return out(
      'precision.first-divergence',
      'pass',
      m('divergence.none', { count: r.modules.length }),
      { counts: r.counts },
    );
  const row = r.modules[first.order]!;
  const firstError = r.modules.find((x) => x.result === 'error');
  const reason = row.reason ? m(row.reason.key, row.reason.params) : '';
  return out(
    'precision.first-divergence',
    first.result === 'error' ? 'fail' : 'warn',
    unmatched
      ? m('joined', {
          items: [
            m('divergence.at', {
              module: first.module,
              result: m(`result.${first.result}`),
              source: first.source ?? m('divergence.noSource'),
              reason,
            }),
            unmatched,
          ],
        })
      : m('divergence.at', {
          module: first.module,
          result: m(`result.${first.result}`),
          source: first.source ?? m('divergence.noSource'),
          reason,
        }),
    {
      firstDivergence: first,
      firstError: firstError
        ? { module: firstError.module, order: firstError.order, source: firstError.source }
        : null,
      before: first.order,
      counts: r.counts,
      baseline: row.baseline,
      target: row.target,
      unmatched: r.unmatched.slice(0, 50),
    },
    m('divergence.fix'),
  );
}

function overflow(f: PrecisionFacts): CheckOutcome {
  const first = (d: RawDump) => d.modules.find((x) => x.outputs.some((o) => o.nan || o.inf));
  const t = first(f.targetDump);
  const b = first(f.baselineDump);
  const hit =
    t && (!b || t.order <= b.order)
      ? { rec: t, side: 'target' as const }
      : b
        ? { rec: b, side: 'baseline' as const }
        : null;
  if (!hit) return out('precision.overflow', 'pass', m('overflow.none'));
  const nan = hit.rec.outputs.reduce((s, o) => s + o.nan, 0);
  const inf = hit.rec.outputs.reduce((s, o) => s + o.inf, 0);
  return out(
    'precision.overflow',
    'fail',
    m('overflow.at', {
      module: hit.rec.module || '(model)',
      side: m(`side.${hit.side}`),
      nan,
      inf,
    }),
    {
      module: hit.rec.module,
      side: hit.side,
      source: hit.rec.callSite ?? hit.rec.classSource,
      nan,
      inf,
      kind: hit.rec.kind ?? 'forward',
    },
    m('overflow.fix'),
  );
}

/** An imported msprobe output: what it holds, its first divergence, NaN/Inf, the config's determinism. */
export function importOutcomes(imp: {
  path: string;
  files: string[];
  problems: Msg[];
  result: PrecisionCompareResult;
  config: { seed: number | null; deterministic: boolean | null } | null;
}): CheckOutcome[] {
  const r = imp.result;
  const outcomes: CheckOutcome[] = [
    out(
      'precision.dump',
      imp.problems.some((p) => !/import\.(config|dumpOnly)$/.test(p.key)) ? 'warn' : 'pass',
      imp.problems.length
        ? m('joined', {
            items: [
              m('import.done', {
                files: imp.files.length,
                path: imp.path,
                modules: r.modules.length,
              }),
              m('import.problems', { count: imp.problems.length, first: imp.problems[0]! }),
            ],
          })
        : m('import.done', { files: imp.files.length, path: imp.path, modules: r.modules.length }),
      { files: imp.files, problems: imp.problems },
    ),
  ];
  if (imp.config) {
    const off = imp.config.deterministic === false || imp.config.seed === null;
    outcomes.push(
      out(
        'precision.determinism',
        off ? 'warn' : 'pass',
        off
          ? m('determinism.off', {
              side: m('side.target'),
              what: [
                imp.config.seed === null ? 'seed' : null,
                imp.config.deterministic === false ? 'is_deterministic' : null,
              ]
                .filter(Boolean)
                .join(', '),
            })
          : m('determinism.on', { seed: imp.config.seed ?? '?' }),
        imp.config,
        off ? m('determinism.fix') : null,
      ),
    );
  }
  const compared = r.modules.some((x) => x.result !== 'none');
  if (compared) {
    const first = r.firstDivergence;
    const row = first ? r.modules[first.order] : null;
    outcomes.push(
      first && row
        ? out(
            'precision.first-divergence',
            first.result === 'error' ? 'fail' : 'warn',
            m('divergence.at', {
              module: first.module,
              result: m(`result.${first.result}`),
              source: first.source ?? m('divergence.noSource'),
              reason: row.reason ? m(row.reason.key, row.reason.params) : '',
            }),
            { firstDivergence: first, counts: r.counts },
            m('divergence.fix'),
          )
        : out(
            'precision.first-divergence',
            'pass',
            m('divergence.none', { count: r.modules.length }),
            { counts: r.counts },
          ),
    );
  }
  const nan = r.modules.find((x) => x.target && (x.target.nan || x.target.inf));
  if (r.modules.length)
    outcomes.push(
      nan
        ? out(
            'precision.overflow',
            'fail',
            m('overflow.at', {
              module: nan.module,
              side: m('side.target'),
              nan: nan.target!.nan,
              inf: nan.target!.inf,
            }),
            { module: nan.module, source: nan.source },
            m('overflow.fix'),
          )
        : out('precision.overflow', 'pass', m('overflow.none')),
    );
  return outcomes;
}
