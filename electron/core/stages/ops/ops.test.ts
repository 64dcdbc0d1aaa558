import { describe, expect, it } from 'vitest';
import type { RawOpTrace } from '../../../../shared/stages/ops/api';
import { AmwError } from '../../../../shared/errors';
import { classifyTrace, variableInputs } from './classify';
import { opListFor } from './op-lists';
import { readTrace } from './trace';

const op = (
  name: string,
  overload = 'default',
  extra: Partial<RawOpTrace['ops'][number]> = {},
) => ({
  op: `aten::${name}`,
  overload,
  count: 1,
  shapes: [[[2, 2]]],
  distinctShapes: 1,
  dynamic: false,
  dtypes: ['float32'],
  modules: ['m'],
  sources: [],
  sparse: false,
  phases: ['forward'],
  composite: null,
  callees: null,
  ...extra,
});
const trace = (ops: RawOpTrace['ops']): RawOpTrace => ({
  v: 1,
  entry: 'm.py:f',
  backward: false,
  batches: 1,
  inputs: [],
  ops,
  warnings: [],
  error: null,
});

describe('op lists and classification', () => {
  it('picks the list of the torch line, or the nearest older one and says so', () => {
    expect(opListFor('2.7.1.post8')).toMatchObject({ tag: 'torch2.7.1_v7.3.0', note: null });
    expect(opListFor('2.5.1').tag).toBe('torch2.1.0_v7.2.0');
    expect(opListFor('2.5.1').note).toContain('nearest');
    expect(opListFor('2.12.0').tag).toBe('torch2.9.0_v26.1.0');
    expect(opListFor('1.11.0').tag).toBe('torch2.1.0_v7.2.0');
  });

  it('structured ops count through their out= kernel; float64 needs a change; sparse raises', () => {
    const r = classifyTrace(
      trace([
        op('gelu'),
        op('mm', 'default', { dtypes: ['float64'] }),
        op('_to_sparse', 'default', { sparse: true }),
        op('int_repr'),
      ]),
      '2.9.0',
    );
    const cls = Object.fromEntries(r.ops.map((o) => [o.op, o.class]));
    expect(cls).toEqual({
      'aten::gelu': 'direct', // 2.9 lists only gelu.out
      'aten::mm': 'needs-change',
      'aten::_to_sparse': 'direct', // 2.9 has a sparse kernel for it
      'aten::int_repr': 'direct',
    });
    const old = classifyTrace(
      trace([op('_to_sparse', 'default', { sparse: true }), op('int_repr')]),
      '2.1.0',
    );
    expect(old.ops.map((o) => o.class).sort()).toEqual(['cpu-fallback', 'unsupported']);
    expect(old.breakdown).toEqual({ direct: 0, needsChange: 0, cpuFallback: 1, unsupported: 1 });
  });

  it('names the inputs whose shapes vary across batches', () => {
    const t = trace([]);
    t.inputs = [
      [{ shape: [2, 5], dtype: 'int64' }, { type: 'int' }],
      [{ shape: [2, 9], dtype: 'int64' }, { type: 'int' }],
    ];
    expect(variableInputs(t)).toEqual([
      {
        arg: 0,
        dims: [1],
        seen: [
          [2, 5],
          [2, 9],
        ],
      },
    ]);
  });

  it('a harness output without a result degrades to a clear PROBE_FAILED, never a crash', () => {
    for (const bad of ['', 'Segmentation fault', '@@AMW-OPS@@{not json', '@@AMW-OPS@@{"v":1}']) {
      let err: unknown;
      try {
        readTrace(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AmwError);
      expect((err as AmwError).code).toBe('PROBE_FAILED');
    }
    expect(readTrace('log line\n@@AMW-OPS@@{"v":1,"ops":[],"inputs":[]}\n').ops).toEqual([]);
  });
});
