import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type {
  ModuleCompare,
  PrecisionHistoryRow,
  PrecisionRunView,
  RawModuleRecord,
  TensorStats,
} from '../../../../shared/stages/precision/api';
import { en } from '../../../../tests/support/text';
import { tempDir } from '../../../../tests/support/temp';
import { resourcesDir } from '../../paths';
import { compareDumps, firstDivergence } from './compare';
import { compareRuns } from './runs-compare';
import { loadPrecisionLimits, precisionLimits } from './tolerances';

describe('precision limits as knowledge data', () => {
  it("ships msprobe's constants and dtype-aware tolerances, fp32 far tighter than msprobe's 0.99", () => {
    const k = precisionLimits();
    expect(k.msprobe).toMatchObject({ cosine: 0.99, cosineMax: 0.9, maxAbs: 0.001, maxAbsMax: 1 });
    expect(k.tolerances.fp32.errorCosine).toBeGreaterThan(k.msprobe.cosine);
    expect(k.tolerances.fp32.errorDrift).toBeLessThan(k.tolerances.fp16.errorDrift);
    expect(k.tolerances.fp16.errorDrift).toBeLessThan(k.tolerances.bf16.errorDrift);
    expect(k.tensorMode.elementsPerOutput).toBeGreaterThan(0);
  });

  it('refuses a file whose pass limit is looser than its error limit, naming the file and field', () => {
    const dir = tempDir();
    const file = join(dir, 'precision.json');
    const doc = JSON.parse(
      readFileSync(join(resourcesDir(), 'knowledge', 'precision.json'), 'utf8'),
    ) as { tolerances: { bf16: { passDrift: number } } };
    doc.tolerances.bf16.passDrift = 0.5;
    writeFileSync(file, JSON.stringify(doc));
    expect(() => loadPrecisionLimits(file)).toThrow(
      /precision\.json is not valid: tolerances\.bf16: passDrift above errorDrift/,
    );
    writeFileSync(file, '{"msprobe": ');
    expect(() => loadPrecisionLimits(file)).toThrow(/precision\.json is not valid/);
    cpSync(join(resourcesDir(), 'knowledge', 'precision.json'), file);
    expect(loadPrecisionLimits(file).tolerances.bf16.passDrift).toBe(1e-6);
  });

  it('the dtype decides: a 1e-3 drift is an error for fp32 and a warning within bf16 tolerance', () => {
    const s = (mean: number): TensorStats => ({
      dtype: 'float32',
      shape: [4],
      max: 1,
      min: -1,
      mean,
      norm: 2,
      nan: 0,
      inf: 0,
      numel: 4,
    });
    const rec = (mean: number): RawModuleRecord => ({
      module: 'm',
      call: 0,
      cls: 'Linear',
      order: 0,
      classSource: null,
      callSite: null,
      outputs: [s(mean)],
    });
    const drift = precisionLimits().tolerances.fp32.errorDrift * 10;
    expect(
      compareDumps([rec(0)], [rec(drift)], { dtype: 'fp32', mode: 'statistics' }).modules[0]!
        .result,
    ).toBe('error');
    expect(
      compareDumps([rec(0)], [rec(drift)], { dtype: 'bf16', mode: 'statistics' }).modules[0]!
        .result,
    ).toBe('warning');
  });

  it('tensor mode: a tensor file cut short is said, not silently skipped', () => {
    const s: TensorStats = {
      dtype: 'float32',
      shape: [4],
      max: 1,
      min: -1,
      mean: 0,
      norm: 2,
      nan: 0,
      inf: 0,
      numel: 4,
      data: { offset: 0, count: 4 },
    };
    const rec: RawModuleRecord = {
      module: 'm',
      call: 0,
      cls: 'Linear',
      order: 0,
      classSource: null,
      callSite: null,
      outputs: [s],
    };
    const r = compareDumps([rec], [structuredClone(rec)], {
      dtype: 'fp32',
      mode: 'tensor',
      read: (side) => (side === 'baseline' ? new Float32Array([1, -1, 0, 0]) : null),
    });
    expect(r.modules[0]).toMatchObject({ result: 'warning', cosine: null });
    expect(
      en({
        key: `stage-precision:${r.modules[0]!.reason!.key}`,
        params: r.modules[0]!.reason!.params,
      }),
    ).toBe(
      'the tensor data of this output could not be read from the target.bin tensor file (cut short): statistics only',
    );
  });
});

const row = (module: string, order: number, result: ModuleCompare['result']): ModuleCompare => ({
  module,
  order,
  cls: 'Linear',
  source: `m.py:${order + 1}`,
  kind: 'forward',
  result,
  reason: null,
  cosine: null,
  maxAbsErr: null,
  maxRelErr: null,
  meanRelErr: null,
  oneThousandthRatio: null,
  fiveThousandthsRatio: null,
  statDrift: null,
  baseline: null,
  target: null,
});
const run = (id: number, modules: ModuleCompare[]) => {
  const view = {
    stageRunId: id,
    modules,
    firstDivergence: firstDivergence(modules),
  } as PrecisionRunView;
  const hrow = {
    stageRunId: id,
    firstDivergence: view.firstDivergence?.module ?? null,
  } as PrecisionHistoryRow;
  return { row: hrow, view };
};

describe('precision runs compared over time', () => {
  it('after a fix the first divergence moves later; the modules that now agree are listed', () => {
    const a = run(3, [row('embed', 0, 'pass'), row('attn', 1, 'error'), row('mlp', 2, 'error')]);
    const b = run(7, [row('embed', 0, 'pass'), row('attn', 1, 'pass'), row('mlp', 2, 'warning')]);
    const r = compareRuns(a, b);
    expect(r.moved).toBe('later');
    expect(en(r.summary)).toBe(
      'Run 7 against run 3: the first divergence moved from attn to mlp, later in execution order.',
    );
    expect(r.changed).toEqual([
      { module: 'attn', order: 1, a: 'error', b: 'pass', change: 'fixed' },
      { module: 'mlp', order: 2, a: 'error', b: 'warning', change: 'fixed' },
    ]);
    expect(r.counts).toEqual({ fixed: 2, regressed: 0, onlyA: 0, onlyB: 0 });
    // the other way round it moved earlier and both got worse
    const back = compareRuns(b, a);
    expect(back.moved).toBe('earlier');
    expect(back.counts.regressed).toBe(2);
  });

  it('gone, appeared, same and none; modules one run lacks are counted', () => {
    const bad = run(1, [row('a', 0, 'pass'), row('b', 1, 'error')]);
    const good = run(2, [row('a', 0, 'pass'), row('b', 1, 'pass'), row('c', 2, 'pass')]);
    expect(compareRuns(bad, good).moved).toBe('gone');
    expect(en(compareRuns(bad, good).summary)).toBe(
      'Run 2 against run 1: the divergence at b is gone; no module diverges.',
    );
    expect(compareRuns(good, bad).moved).toBe('appeared');
    expect(compareRuns(bad, bad).moved).toBe('same');
    expect(compareRuns(good, good).moved).toBe('none');
    expect(compareRuns(bad, good).counts).toEqual({ fixed: 1, regressed: 0, onlyA: 0, onlyB: 1 });
    expect(compareRuns(bad, good).onlyIn).toEqual([{ module: 'c', run: 'b' }]);
  });
});
