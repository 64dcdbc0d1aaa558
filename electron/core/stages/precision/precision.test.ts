import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RawModuleRecord, TensorStats } from '../../../../shared/stages/precision/api';
import { renderText, translator } from '../../../../shared/i18n';
import { STAGE_NAMESPACES } from '../../../../shared/stages';
import { compareDumps, tensorMetrics } from './compare';
import { importMsprobe, parseCsv } from './msprobe';
import { xlsx } from '../../../../tests/support/xlsx';
import { REFERENCE } from '../../../../tests/support/reference';

const FIX = `${REFERENCE}/fixtures/precision`;
const t = translator('en', STAGE_NAMESPACES);
const en = (x: Parameters<typeof renderText>[2]) => renderText(t, 'en', x);

const stats = (mean: number, extra: Partial<TensorStats> = {}): TensorStats => ({
  dtype: 'float32',
  shape: [2, 3],
  max: 1,
  min: -1,
  mean,
  norm: 2,
  nan: 0,
  inf: 0,
  numel: 6,
  ...extra,
});
const rec = (module: string, order: number, outputs: TensorStats[]): RawModuleRecord => ({
  module,
  call: 0,
  cls: 'Linear',
  order,
  classSource: null,
  callSite: `m.py:${order + 1}`,
  outputs,
  kind: 'forward',
});

describe('compare', () => {
  it('identical fp32 statistics pass with zero drift; a small fp32 drift is already a divergence', async () => {
    const base = [rec('a', 0, [stats(0.1)]), rec('b', 1, [stats(0.2)]), rec('c', 2, [stats(0.3)])];
    const same = compareDumps(base, structuredClone(base), { dtype: 'fp32', mode: 'statistics' });
    expect(same.counts).toEqual({ pass: 3, warning: 0, error: 0 });
    expect(same.modules.every((m) => m.statDrift === 0)).toBe(true);
    expect(same.firstDivergence).toBeNull();
    const drift = structuredClone(base);
    drift[1]!.outputs[0]!.mean = 0.2 + 1e-3; // 1e-3 of the scale: far inside 0.99 cosine, not fp32
    const r = compareDumps(base, drift, { dtype: 'fp32', mode: 'statistics' });
    expect(r.firstDivergence).toMatchObject({ module: 'b', result: 'error', source: 'm.py:2' });
    expect(r.modules[0]!.result).toBe('pass');
    // the same drift under bf16 is within its tolerance: a warning
    const bf = compareDumps(base, drift, { dtype: 'bf16', mode: 'statistics' });
    expect(bf.modules[1]!.result).toBe('warning');
    expect(
      en({
        key: `stage-precision:${bf.modules[1]!.reason!.key}`,
        params: bf.modules[1]!.reason!.params,
      }),
    ).toContain('bf16 tolerance');
  });

  it('shape, NaN and a module missing on one side are errors naming the cause', async () => {
    const base = [rec('a', 0, [stats(0)]), rec('b', 1, [stats(0)]), rec('gone', 2, [stats(0)])];
    const tgt = [
      rec('a', 0, [stats(0, { shape: [3, 2] })]),
      rec('b', 1, [stats(0, { nan: 2 })]),
      rec('new', 2, [stats(0)]),
    ];
    const r = compareDumps(base, tgt, { dtype: 'fp32', mode: 'statistics' });
    expect(r.modules.map((m) => m.reason?.key)).toEqual([
      'reason.shape',
      'reason.nanInf',
      'reason.missing',
    ]);
    expect(r.unmatched).toEqual([
      { module: 'gone', side: 'baseline' },
      { module: 'new', side: 'target' },
    ]);
  });

  it("msprobe's formulas on tensors", async () => {
    const b = [1, 2, 0, 4];
    const n = [1, 2.006, 0, 4.01]; // relative errors 0, 3e-3, 0 (0 against 0, eps-nudged), 2.5e-3
    const m = tensorMetrics(n, b);
    expect(m.maxAbsErr).toBeCloseTo(0.01, 10);
    expect(m.maxRelErr).toBeCloseTo(0.003, 10);
    expect(m.meanRelErr).toBeCloseTo(0.0055 / 4, 10);
    expect(m.oneThousandthRatio).toBe(0.5);
    expect(m.fiveThousandthsRatio).toBe(1);
    expect(m.cosine).toBeGreaterThan(0.999);
    expect(tensorMetrics(b, b)).toMatchObject({
      cosine: 1,
      maxAbsErr: 0,
      maxRelErr: 0,
      oneThousandthRatio: 1,
    });
  });
});

describe('msprobe import: every fixture', () => {
  it('the legacy compare_result csv: every row with its exact figures', async () => {
    const r = await importMsprobe(
      join(FIX, 'compare_result_legacy/compare_result_20230703104808.csv'),
    );
    // [NPU Name, dtype, shape, Cosine, MaxAbsErr, NPU max, NPU min, NPU mean, Bench max, Bench mean]
    const rows: [
      string,
      string,
      number[],
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ][] = [
      [
        'Functional_linear_0_forward_input.0',
        'float32',
        [3, 2],
        1.0,
        0.0,
        1.948258399963379,
        -1.0052297115325928,
        -0.2003595232963562,
        1.948258399963379,
        -0.2003595232963562,
      ],
      [
        'Functional_linear_0_forward_input.1',
        'float32',
        [3, 2],
        1.0,
        0.0,
        0.28375449776649475,
        -0.6661239266395569,
        -0.2789986729621887,
        0.28375449776649475,
        -0.2789986729621887,
      ],
      [
        'Functional_linear_0_forward_input.2',
        'float32',
        [3],
        1.0,
        0.0,
        0.2457989901304245,
        -0.6338542103767395,
        -0.14437106251716614,
        0.2457989901304245,
        -0.14437106251716614,
      ],
      [
        'Functional_linear_0_forward_output',
        'float32',
        [3, 3],
        1.0,
        0.0,
        0.8278868794441223,
        -0.8729169964790344,
        0.16790540516376495,
        0.8278868794441223,
        0.16790540516376495,
      ],
      [
        'Torch_relu_0_forward_input.0',
        'float32',
        [3, 3],
        1.0,
        0.0,
        0.8278868794441223,
        -0.8729169964790344,
        0.16790540516376495,
        0.8278868794441223,
        0.16790540516376495,
      ],
      [
        'Torch_relu_0_forward_output',
        'float32',
        [3, 3],
        1.0,
        0.0,
        0.8278868794441223,
        0.0,
        0.31367552280426025,
        0.8278868794441223,
        0.31367552280426025,
      ],
      [
        'Functional_relu_0_forward_input.0',
        'float32',
        [3, 3],
        1.0,
        0.0,
        0.8278868794441223,
        -0.8729169964790344,
        0.16790540516376495,
        0.8278868794441223,
        0.16790540516376495,
      ],
      [
        'Functional_relu_0_forward_output',
        'float32',
        [3, 3],
        1.0,
        0.0,
        0.8278868794441223,
        0.0,
        0.31367552280426025,
        0.8278868794441223,
        0.31367552280426025,
      ],
    ];
    expect(
      r.modules.map((m) => [
        m.module,
        m.target!.dtype,
        m.target!.shape,
        m.cosine,
        m.maxAbsErr,
        m.target!.max,
        m.target!.min,
        m.target!.mean,
        m.baseline!.max,
        m.baseline!.mean,
      ]),
    ).toEqual(rows);
    expect(r.modules.every((m) => m.result === 'pass' && m.baseline!.dtype === 'float32')).toBe(
      true,
    );
    expect(r.modules).toHaveLength(8);
    expect(r.modules[0]).toMatchObject({
      module: 'Functional_linear_0_forward_input.0',
      cosine: 1,
      maxAbsErr: 0,
      result: 'pass',
      target: { dtype: 'float32', shape: [3, 2], max: 1.948258399963379 },
    });
    expect(r.problems).toEqual([]);
    expect(r.counts.pass).toBe(8);
  });

  it('a PyTorch mix-level statistics dump with stack.json and construct.json', async () => {
    const r = await importMsprobe(join(FIX, 'dump_pytorch_mix_statistics'));
    expect(r.files.sort()).toEqual([
      'dump_pytorch_mix_statistics/construct.json',
      'dump_pytorch_mix_statistics/dump.json',
      'dump_pytorch_mix_statistics/stack.json',
    ]);
    expect(r.framework).toBe('pytorch');
    // [name, first frame outside msprobe/torch in stack.json, then the first output's dtype,
    // shape, Max, Min, Mean, Norm as dump.json has them (a bool tensor's true/false as 1/0)]
    const rows: [
      string,
      string | null,
      string,
      number[],
      number,
      number,
      number | null,
      number | null,
    ][] = [
      [
        'Tensor.__add__.0.forward',
        '/path_to_net/PanGu/pangu/training/utils.py:176',
        'int64',
        [],
        424,
        424,
        424,
        424,
      ],
      [
        'Tensor.__add__.1.forward',
        '/path_to_net/PanGu/pangu/training/utils.py:176',
        'int64',
        [],
        424,
        424,
        424,
        424,
      ],
      [
        'Tensor.__or__.0.forward',
        '/path_to_package/third_party/MindSpeed/mindspeed/core/tensor_parallel/layers.py:19',
        'bool',
        [1, 4096],
        1,
        0,
        null,
        null,
      ],
      [
        'Distributed.all_reduce.0.forward',
        '/path_to_net/third_party/Megatron-LM/megatron/core/tensor_parallel/mappings.py:24',
        'bfloat16',
        [1, 4096, 6144],
        2.6875,
        -2.640625,
        0.000316619873046875,
        2512.0,
      ],
      [
        'Module.module.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward.0',
        '/path_to_net/third_party/Megatron-LM/megatron/legacy/model/language_model.py:217',
        'bfloat16',
        [1, 4096, 6144],
        2.6875,
        -2.640625,
        0.000316619873046875,
        2512.0,
      ],
      [
        'NPU.npu_rms_norm.0.forward',
        '/path_to_package/third_party/MindSpeed/mindspeed/core/fusions/rms_norm.py:26',
        'bfloat16',
        [1024, 1, 6144],
        5.125,
        -5.25,
        0.0005645751953125,
        2512.0,
      ],
      [
        'Module.module.module.language_model.encoder.layers.0.input_norm.RMSNorm.forward.0',
        '/path_to_net/third_party/Megatron-LM/megatron/legacy/model/transformer.py:1194',
        'bfloat16',
        [1024, 1, 6144],
        5.125,
        -5.25,
        0.0005645751953125,
        2512.0,
      ],
      [
        'Module.module.module.language_model.encoder.layers.0.self_attention.ParallelAttention.forward.0',
        '/path_to_net/third_party/Megatron-LM/megatron/legacy/model/transformer.py:1198',
        'bfloat16',
        [1024, 1, 6144],
        0.421875,
        -0.443359375,
        -0.0002346038818359375,
        50.75,
      ],
      [
        'Module.module.module.language_model.encoder.layers.0.ParallelTransformerLayer.forward.0',
        '/path_to_net/third_party/Megatron-LM/megatron/legacy/model/transformer.py:1832',
        'bfloat16',
        [1024, 1, 6144],
        2.46875,
        -2.6875,
        -0.000438690185546875,
        1280.0,
      ],
      [
        'Torch.cos.0.forward',
        '/path_to_package/third_party/MindSpeed/mindspeed/core/fusions/rotary_pos_embedding.py:16',
        'float32',
        [4096, 1, 1, 128],
        1.0000001192092896,
        -1.0000001192092896,
        0.13587358593940735,
        528.9301147460938,
      ],
      [
        'NPU.npu_fusion_attention.0.forward',
        '/path_to_package/third_party/MindSpeed/mindspeed/model/transformer.py:525',
        'bfloat16',
        [4096, 1, 1536],
        2.734375,
        -2.578125,
        -0.001373291015625,
        266.0,
      ],
      [
        'NPU.npu_fusion_attention.0.backward',
        null,
        'bfloat16',
        [4096, 1, 1536],
        1.3634562492370605e-6,
        -1.3485550880432129e-6,
        -3.765308065339923e-10,
        0.000286102294921875,
      ],
    ];
    expect(
      r.modules.map((m) => [
        m.module,
        m.source,
        m.target!.dtype,
        m.target!.shape,
        m.target!.max,
        m.target!.min,
        m.target!.mean,
        m.target!.norm,
      ]),
    ).toEqual(rows);
    expect(r.modules.map((m) => m.kind).filter((k) => k === 'grad')).toHaveLength(1);
    expect(r.modules).toHaveLength(12);
    const emb = r.modules.find((x) => x.module.includes('VocabParallelEmbedding'))!;
    expect(emb.cls).toBe('VocabParallelEmbedding');
    expect(emb.target?.dtype).toBe('bfloat16');
    expect(r.modules[0]!.source).toBe('/path_to_net/PanGu/pangu/training/utils.py:176');
    expect(r.modules[0]!.target).toMatchObject({ dtype: 'int64', max: 424 });
    expect(r.modules.every((x) => x.result === 'none')).toBe(true); // one side only
    expect(r.problems.map((p) => p.key)).toEqual(['stage-precision:import.dumpOnly']);
  });

  it('the quick-start construct.json alone: its modules, and the missing dump.json named', async () => {
    const r = await importMsprobe(join(FIX, 'quickstart_gpu_dump'));
    expect(r.modules.length).toBe(
      Object.keys(
        JSON.parse(
          readFileSync(join(FIX, 'quickstart_gpu_dump/step0/proc2016/construct.json'), 'utf8'),
        ),
      ).length,
    );
    expect(r.modules.slice(0, 4).map((m) => [m.module, m.cls])).toEqual([
      ['Tensor.to.0.forward', 'Tensor.to'],
      ['Tensor.to.1.forward', 'Tensor.to'],
      ['Functional.conv2d.0.forward', 'Functional.conv2d'],
      ['Module.conv1.Conv2d.forward.0', 'Conv2d'],
    ]);
    expect(r.modules).toHaveLength(868);
    expect(r.modules[867]!.module).toBe('Torch.clone.160.forward');
    expect(r.modules.every((m) => m.result === 'none' && m.target === null)).toBe(true);
    expect(en(r.problems[0]!)).toBe('quickstart_gpu_dump/step0/proc2016: dump.json is missing.');
  });

  it('config.json files: task, level, seed and determinism', async () => {
    expect((await importMsprobe(join(FIX, 'msprobe_default_config/config.json'))).config).toEqual({
      task: 'statistics',
      level: 'L1',
      seed: null,
      deterministic: null,
    });
    expect((await importMsprobe(join(FIX, 'msprobe_test_config'))).config).toEqual({
      task: 'statistics',
      level: 'L1',
      seed: 1234,
      deterministic: false,
    });
  });

  it('the whole fixture folder at once', async () => {
    const r = await importMsprobe(FIX);
    expect(r.files).toHaveLength(7);
    expect(r.modules.length).toBeGreaterThan(800);
  });
});

describe('msprobe import: xlsx (the format msprobe writes)', () => {
  it('a 26.x statistics-mode workbook: results, percent relative errors, JSON Err_message, stack, NaN', async () => {
    const r = await importMsprobe(join(__dirname, '../../../../tests/fixtures/precision-xlsx'));
    expect(r.problems).toEqual([]);
    expect(r.modules.map((x) => x.result)).toEqual(['pass', 'warning', 'error']);
    expect(r.modules[1]).toMatchObject({
      module: 'Functional.gelu.0.forward.output.0',
      source: '/work/model.py:20',
      statDrift: expect.closeTo(0.00014, 12),
      target: { dtype: 'bfloat16', shape: [8, 64], max: 1.634 },
      baseline: { dtype: 'float32', max: 1.632 },
    });
    expect(
      en({
        key: `stage-precision:${r.modules[1]!.reason!.key}`,
        params: r.modules[1]!.reason!.params,
      }),
    ).toBe('msprobe: “Need double check api accuracy.”');
    expect(r.modules[2]!.target!.nan).toBe(1);
    expect(r.firstDivergence).toMatchObject({
      module: 'Functional.gelu.0.forward.output.0',
      result: 'warning',
    });
  });
});

describe('msprobe import: bad input', () => {
  it('a half-broken dump says which fields it lacks, never "?", and lists each problem once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-msprobe-'));
    try {
      // a dump.json from the fixture without its task and framework, stack and construct gone
      const doc = JSON.parse(
        readFileSync(join(FIX, 'dump_pytorch_mix_statistics/dump.json'), 'utf8'),
      ) as Record<string, unknown>;
      delete doc.task;
      delete doc.framework;
      writeFileSync(join(dir, 'dump.json'), JSON.stringify(doc));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ level: 'L1' }));
      const r = await importMsprobe(dir);
      const texts = r.problems.map(en);
      const name = dir.split('/').pop()!;
      expect(texts).toContain(
        `One-sided dump (framework: not recorded in ${name}/dump.json; task: not recorded in ${name}/dump.json): statistics only, nothing to compare against.`,
      );
      expect(texts).toContain(`msprobe config ${name}/config.json: task: not recorded; level: L1.`);
      expect(texts.join('\n')).not.toContain('?');
      expect(new Set(texts).size).toBe(texts.length);
      const zh = r.problems.map((p) =>
        renderText(translator('zh-CN', STAGE_NAMESPACES), 'zh-CN', p),
      );
      expect(zh.join('\n')).toContain('dump.json 中未记录');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a truncated dump.json keeps the entries before the damage and names the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-msprobe-'));
    try {
      cpSync(join(FIX, 'dump_pytorch_mix_statistics'), dir, { recursive: true });
      const text = readFileSync(join(dir, 'dump.json'), 'utf8');
      writeFileSync(join(dir, 'dump.json'), text.slice(0, Math.floor(text.length / 2)));
      const r = await importMsprobe(dir);
      expect(r.modules.length).toBeGreaterThan(2);
      expect(r.modules.length).toBeLessThan(12);
      expect(en(r.problems[0]!)).toMatch(/dump\.json: not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('unknown columns and ragged rows are named; an xlsx is refused with what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-msprobe-'));
    try {
      writeFileSync(
        join(dir, 'compare_result_1.csv'),
        'NPU Name,Cosine,Wobble\nA.0.forward,0.5,1\nB.0.forward\n',
      );
      writeFileSync(join(dir, 'compare_result_2.xlsx'), 'PK not a zip');
      const r = await importMsprobe(dir);
      const texts = r.problems.map(en);
      expect(texts).toContain(
        'compare_result_1.csv: columns not known to any msprobe version: Wobble.'.replace(
          'compare_result_1.csv',
          `${dir.split('/').pop()}/compare_result_1.csv`,
        ),
      );
      expect(texts.some((s) => s.includes('line 3: 1 fields, the header has 3'))).toBe(true);
      expect(
        texts.some((s) => /compare_result_2\.xlsx: not a readable xlsx workbook/.test(s)),
      ).toBe(true);
      expect(r.modules[0]).toMatchObject({ module: 'A.0.forward', cosine: 0.5 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an xlsx of an unknown msprobe version names its unknown columns; a sheet with no NPU Name names what it has', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-msprobe-'));
    try {
      writeFileSync(
        join(dir, 'compare_result_rank0_1.xlsx'),
        xlsx([
          ['NPU Name', 'Bench Name', 'Cosine', 'MaxAbsErr', 'ULP Err', 'Precision Grade'],
          [
            'Functional.gelu.0.forward.output.0',
            'Functional.gelu.0.forward.output.0',
            0.98,
            0.5,
            3,
            'B',
          ],
        ]),
      );
      writeFileSync(
        join(dir, 'compare_result_2.xlsx'),
        xlsx([
          ['Op', 'Score'],
          ['gelu', 1],
        ]),
      );
      const r = await importMsprobe(dir);
      const texts = r.problems.map(en);
      const base = dir.split('/').pop()!;
      expect(texts).toContain(
        `${base}/compare_result_rank0_1.xlsx: columns not known to any msprobe version: ULP Err, Precision Grade.`,
      );
      expect(texts).toContain(
        `${base}/compare_result_2.xlsx: no "NPU Name" column (columns: Op, Score): not an msprobe compare result.`,
      );
      // what could be read is kept, by column name
      expect(r.modules).toHaveLength(1);
      expect(r.modules[0]).toMatchObject({
        module: 'Functional.gelu.0.forward.output.0',
        cosine: 0.98,
        maxAbsErr: 0.5,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a dump folder missing stack.json and construct.json names both and keeps the dump', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-msprobe-'));
    try {
      cpSync(join(FIX, 'dump_pytorch_mix_statistics/dump.json'), join(dir, 'dump.json'));
      const r = await importMsprobe(dir);
      const base = dir.split('/').pop()!;
      expect(r.problems.map(en)).toEqual(
        expect.arrayContaining([
          `${base}: stack.json is missing.`,
          `${base}: construct.json is missing.`,
        ]),
      );
      expect(r.modules).toHaveLength(12);
      expect(r.modules.every((m) => m.source === null)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('two md5-mode dumps: a checksum that differs is an error even where the statistics agree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-msprobe-'));
    try {
      const doc = (md5: string) =>
        JSON.stringify({
          task: 'statistics',
          level: 'L1',
          framework: 'pytorch',
          data: {
            'Functional.gelu.0.forward': {
              input_args: [],
              output: [
                {
                  type: 'torch.Tensor',
                  dtype: 'torch.float32',
                  shape: [2],
                  Max: 1,
                  Min: 0,
                  Mean: 0.5,
                  Norm: 1,
                  md5,
                },
              ],
            },
            'Functional.linear.0.forward': {
              input_args: [],
              output: [
                {
                  type: 'torch.Tensor',
                  dtype: 'torch.float32',
                  shape: [2],
                  Max: 1,
                  Min: 0,
                  Mean: 0.5,
                  Norm: 1,
                  md5: 'aaaa0001',
                },
              ],
            },
          },
        });
      for (const [side, md5] of [
        ['npu', '1f2e3d4c'],
        ['bench', '9a8b7c6d'],
      ] as const) {
        const d = join(dir, side, 'step0', 'rank0');
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, 'dump.json'), doc(md5));
        writeFileSync(join(d, 'stack.json'), '{}');
        writeFileSync(join(d, 'construct.json'), '{}');
      }
      const r = await importMsprobe(dir);
      expect(r.modules.map((m) => [m.module, m.result])).toEqual([
        ['Functional.gelu.0.forward', 'error'],
        ['Functional.linear.0.forward', 'pass'],
      ]);
      const reason = r.modules[0]!.reason!;
      expect(en({ key: `stage-precision:${reason.key}`, params: reason.params })).toBe(
        'checksum 1f2e3d4c against 9a8b7c6d (md5 mode: the bytes differ)',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parses quoted csv fields with commas and newlines', async () => {
    expect(parseCsv('a,"b, c","d\n""e"""\n1,2,3\n')).toEqual([
      ['a', 'b, c', 'd\n"e"'],
      ['1', '2', '3'],
    ]);
  });
});
