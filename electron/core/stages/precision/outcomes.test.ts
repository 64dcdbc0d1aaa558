import { describe, expect, it } from 'vitest';
import type { RawDump } from '../../../../shared/stages/precision/api';
import { renderText, translator } from '../../../../shared/i18n';
import { STAGE_NAMESPACES } from '../../../../shared/stages';
import { precisionOutcomes } from './outcomes';

const t = translator('en', STAGE_NAMESPACES);
const en = (x: Parameters<typeof renderText>[2]) => renderText(t, 'en', x);

const dump = (over: Partial<RawDump> = {}): RawDump => ({
  v: 1,
  role: 'target',
  entry: 'train/model.py:build',
  torch: '2.1.0',
  torchNpu: '2.1.0.post12',
  device: 'npu',
  deviceNote: null,
  dtype: 'fp16',
  autocast: { device: 'npu', dtype: 'fp16' },
  bf16Supported: true,
  determinism: {
    seed: 1234,
    torchDeterministic: true,
    cudnnDeterministic: true,
    npuDeterministic: true,
    hcclDeterministic: null,
    worldSize: 1,
  },
  gradScaler: { found: false, initScale: null, growthInterval: null, at: null },
  mode: 'statistics',
  modules: [],
  batches: 1,
  warnings: [],
  error: null,
  ...over,
});
const facts = (target: RawDump, dtype: 'fp32' | 'bf16' | 'fp16' = 'fp16') => ({
  host: 'npu',
  baseline: 'gpu',
  baselineDump: dump({ role: 'baseline', device: 'cuda', dtype: 'fp32', autocast: null }),
  targetDump: target,
  result: {
    dtype,
    mode: 'statistics' as const,
    counts: { pass: 0, warning: 0, error: 0 },
    firstDivergence: null,
    modules: [],
    unmatched: [],
  },
});
const get = (f: ReturnType<typeof facts>, id: string) =>
  precisionOutcomes(f).find((c) => c.id === id)!;

describe('precision checks', () => {
  it('loss-scale: fp16 needs a GradScaler starting at 2^14 (seeds); bf16 needs none', () => {
    const missing = get(facts(dump()), 'precision.loss-scale');
    expect(missing.status).toBe('warn');
    expect(en(missing.summary)).toContain('fp16 without a GradScaler in train/model.py');
    const high = get(
      facts(
        dump({
          gradScaler: { found: true, initScale: 65536, growthInterval: null, at: 'model.py:40' },
        }),
      ),
      'precision.loss-scale',
    );
    expect(high.status).toBe('warn');
    expect(en(high.summary)).toBe(
      'GradScaler starts at 65536 (model.py:40): early steps overflow and are skipped.',
    );
    const ok = get(
      facts(
        dump({
          gradScaler: { found: true, initScale: 16384, growthInterval: 2000, at: 'model.py:40' },
        }),
      ),
      'precision.loss-scale',
    );
    expect(ok.status).toBe('pass');
    expect(get(facts(dump({ dtype: 'bf16' }), 'bf16'), 'precision.loss-scale').status).toBe('pass');
  });

  it('amp-policy: fp16 where the chip has bf16 is a warning; bf16 where it has none fails', () => {
    expect(get(facts(dump()), 'precision.amp-policy').status).toBe('warn');
    const noBf16 = get(
      facts(dump({ autocast: { device: 'npu', dtype: 'bf16' }, bf16Supported: false }), 'bf16'),
      'precision.amp-policy',
    );
    expect(noBf16.status).toBe('fail');
    expect(
      get(
        facts(dump({ autocast: { device: 'npu', dtype: 'bf16' } }), 'bf16'),
        'precision.amp-policy',
      ).status,
    ).toBe('pass');
  });

  it('determinism: a multi-card run without HCCL_DETERMINISTIC, an unseeded side', () => {
    const d = dump({
      determinism: {
        ...dump().determinism,
        worldSize: 8,
        hcclDeterministic: null,
        npuDeterministic: false,
      },
    });
    const c = get(facts(d), 'precision.determinism');
    expect(c.status).toBe('warn');
    expect(en(c.summary)).toContain(
      'HCCL_DETERMINISTIC is not set although 8 processes take part.',
    );
    expect(en(c.summary)).toContain('Not deterministic on target: torch_npu set_deterministic.');
  });

  it('dump: aten ops asked for but never called, ops TorchDispatchMode could not hook, tensors past the cap', () => {
    const hooks = (o: Partial<NonNullable<RawDump['opHooks']>>) => ({
      requested: ['gelu', 'aten::softmax'],
      via: 'TorchDispatchMode',
      seen: ['gelu'],
      note: null,
      dropped: 0,
      ...o,
    });
    const unseen = get(facts(dump({ opHooks: hooks({}) })), 'precision.dump');
    expect(unseen.status).toBe('warn');
    expect(en(unseen.summary)).toContain('Aten ops recorded beside the modules: gelu.');
    expect(en(unseen.summary)).toContain(
      'Aten ops asked for but never called inside the model: softmax.',
    );
    const all = get(facts(dump({ opHooks: hooks({ requested: ['gelu'] }) })), 'precision.dump');
    expect(all.status).toBe('pass');
    const none = get(
      facts(
        dump({
          opHooks: hooks({ via: null, seen: [], note: 'torch 1.12 has no TorchDispatchMode' }),
        }),
      ),
      'precision.dump',
    );
    expect(none.status).toBe('warn');
    expect(en(none.summary)).toContain(
      'Aten ops could not be recorded: torch 1.12 has no TorchDispatchMode.',
    );
    const capped = get(facts(dump({ tensorsDropped: 3 })), 'precision.dump');
    expect(capped.status).toBe('warn');
    expect(en(capped.summary)).toContain("3 outputs past tensor mode's byte cap");
  });

  it("dump: script mode says the inputs are the script's own, under the same seed", () => {
    const c = get(facts(dump({ script: true, batches: 2, entry: 'train.py' })), 'precision.dump');
    expect(c.status).toBe('pass');
    expect(en(c.summary)).toContain(
      "Script mode (2 call(s) of the model recorded): the weights travelled from the baseline; the inputs are the script's own, made under the same seed 1234.",
    );
  });
});
