import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Advice, ProfileResult } from '../../../../shared/stages/profiling/api';
import { amw } from '../../../../tests/support/cli';
import { importProfile } from './import';
import { compareProfiles } from './compare';
import { REFERENCE } from '../../../../tests/support/reference';

const F = `${REFERENCE}/fixtures/profiling`;
const ids = (r: ProfileResult) => r.advice.map((a) => a.id);
const advice = (r: ProfileResult, id: string): Advice => {
  const a = r.advice.find((x) => x.id === id);
  if (!a) throw new Error(`${id} did not fire: ${ids(r).join(', ')}`);
  return a;
};
const tmp: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'amw-prof-'));
  tmp.push(d);
  return d;
};
afterAll(() => tmp.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('every profiling fixture imports with its figures', () => {
  it('torch_npu Level1 (Jan 2025, 46 columns, OP State, trailing TAB, 10-column step trace, env metadata)', async () => {
    const r = await importProfile(join(F, 'torch_npu_level1_rank0_ascend_pt'));
    expect(r.kind).toBe('torch_npu');
    expect(r.ranks).toEqual([
      {
        rank: 0,
        dir: '.',
        kind: 'torch_npu',
        files: [
          'ASCEND_PROFILER_OUTPUT/kernel_details.csv',
          'ASCEND_PROFILER_OUTPUT/op_statistic.csv',
          'ASCEND_PROFILER_OUTPUT/step_trace_time.csv',
        ],
      },
    ]);
    const k = r.kernels!;
    expect(k.count).toBe(191);
    expect(k.totalUs).toBeCloseTo(114865.613, 6);
    expect(Object.keys(k.byTaskType)).toEqual([
      'HCCL',
      'AI_VECTOR_CORE',
      'AI_CORE',
      'MIX_AIV',
      'DSA_SQE',
    ]);
    expect(k.byTaskType.HCCL!.us).toBeCloseTo(105991.876, 6);
    expect(k.byTaskType.HCCL!.share).toBeCloseTo(105991.876 / 114865.613, 9);
    expect(k.byTaskType.AI_VECTOR_CORE!.us).toBeCloseTo(5823.4, 6);
    expect(k.byTaskType.AI_CORE!.us).toBeCloseTo(2805.855, 6);
    expect(k.byTaskType.MIX_AIV!.us).toBeCloseTo(238.962, 6);
    expect(k.top[0]).toEqual({
      name: 'hcom_allReduce__586_0_1',
      opType: 'hcom_allReduce_',
      taskType: 'HCCL',
      us: 79089.52,
      count: 1,
    });
    expect(k.top).toHaveLength(10);
    expect(k.opState).toEqual({ dynamic: 187, static: 0, other: 4 });
    expect(r.steps).toEqual([
      {
        rank: 0,
        step: 50,
        computingUs: 8873.756000000001,
        communicationNotOverlappedUs: 101963.203,
        overlappedUs: 4028.6750000000175,
        freeUs: 25744.050000000003,
        bubbleUs: 0,
        preparingUs: 17902.5,
        totalUs: 8873.756000000001 + 101963.203 + 25744.050000000003,
      },
    ]);
    expect(ids(r)).toEqual([
      'communication.uncovered',
      'overall.free',
      'dynamic-shape',
      'env-vars',
    ]);
    expect(advice(r, 'overall.free').share).toBeCloseTo(0.188489235717976, 12);
    expect(advice(r, 'overall.free').severity).toBe('high');
    expect(advice(r, 'communication.uncovered').share).toBeCloseTo(0.746540121108638, 12);
    expect(advice(r, 'dynamic-shape').evidence).toMatchObject({ dynamic: 187, static: 0 });
    expect(advice(r, 'dynamic-shape').suggestion.key).toBe(
      'stage-profiling:advice.dynamicShape.suggestion',
    );
    // msprof-analyze's env checker: empty ACLNN_CACHE_LIMIT, HOST_CACHE_CAPACITY, no expandable_segments
    expect((advice(r, 'env-vars').evidence as { name: string }[]).map((e) => e.name)).toEqual([
      'ACLNN_CACHE_LIMIT',
      'HOST_CACHE_CAPACITY',
      'PYTORCH_NPU_ALLOC_CONF',
    ]);
    expect(r.warnings).toEqual([]);
  });

  it('torch_npu Level0: 8 columns, task types N/A but for HCCL, no OP State — no dynamic-shape advice', async () => {
    const r = await importProfile(join(F, 'torch_npu_level0_rank0_ascend_pt'));
    expect(r.ranks[0]!.rank).toBe(0); // from the folder name: no profiler_info here
    expect(r.kernels!.count).toBe(191);
    expect(Object.keys(r.kernels!.byTaskType)).toEqual(['HCCL', 'N/A']);
    expect(r.kernels!.byTaskType['N/A']!.us).toBeCloseTo(8827.454, 6);
    expect(r.kernels!.opState).toBeNull();
    expect(r.steps[0]!.computingUs).toBeCloseTo(8827.472999999998, 9);
    expect(ids(r)).toEqual(['communication.uncovered', 'overall.free']);
  });

  it('2023 Megatron kernel_details: every task type incl. AI_CPU, the ragged row kept and reported, 9-column step trace', async () => {
    const r = await importProfile(join(F, 'torch_npu_megatron_rank0'));
    const k = r.kernels!;
    expect(k.count).toBe(21); // the short row (line 17) is counted, not dropped
    expect(r.warnings).toEqual([
      {
        file: 'ASCEND_PROFILER_OUTPUT/kernel_details.csv',
        line: 17,
        message: { key: 'stage-profiling:warn.ragged', params: { fields: 31, header: 32 } },
      },
    ]);
    expect(Object.keys(k.byTaskType)).toEqual([
      'MIX_AIC',
      'HCCL',
      'DSA_SQE',
      'AI_CORE',
      'AI_CPU',
      'MIX_AIV',
      'AI_VECTOR_CORE',
    ]);
    expect(k.byTaskType.AI_CPU).toEqual({
      us: 72.1612 + 72.8611,
      share: expect.any(Number),
      count: 2,
    });
    expect(k.top[0]).toMatchObject({ name: 'FlashAttentionScore', taskType: 'MIX_AIC', count: 4 });
    expect(k.aicpuOps).toEqual([{ opType: 'Cast', us: 72.1612 + 72.8611, count: 2 }]);
    expect(r.steps[0]!.preparingUs).toBeNull();
    expect(r.steps[0]!.totalUs).toBeCloseTo(291698.0985, 3);
    // AI CPU fires (longest task ≥ 20 µs) but is a small share of the step: low
    const a = advice(r, 'aicpu');
    expect(a.severity).toBe('low');
    expect(a.share).toBeCloseTo((72.1612 + 72.8611) / 291698.09849218733, 12);
    expect(ids(r)).toEqual(['communication.uncovered', 'overall.free', 'aicpu']);
  });

  it("msprof op_summary (CANN 7): msprof's column names, the same rows as kernel_details; shares of kernel time without a step trace", async () => {
    const r = await importProfile(join(F, 'msprof_op_summary_cann7'));
    const twin = await importProfile(join(F, 'torch_npu_megatron_rank0'));
    expect(r.kind).toBe('msprof');
    expect(r.kernels!.byTaskType).toEqual(twin.kernels!.byTaskType);
    expect(r.kernels!.top).toEqual(twin.kernels!.top);
    expect(r.warnings.map((w) => [w.file, w.line])).toEqual([['op_summary_1.csv', 17]]);
    expect(r.steps).toEqual([]);
    const a = advice(r, 'aicpu');
    expect(a.share).toBeCloseTo(145.0223 / 37370.9655, 9);
    expect(a.evidence).toMatchObject({ basis: 'kernels' });
    expect(ids(r)).toEqual(['aicpu']);
  });

  it('msprof-analyze advisor kernel table: all dynamic → dynamic-shape, high; no AI CPU, no steps', async () => {
    const r = await importProfile(join(F, 'msprof_analyze_advisor_compute'));
    expect(r.ranks[0]!.rank).toBeNull();
    expect(r.kernels!.count).toBe(29);
    expect(r.kernels!.byTaskType.MIX_AIC!.us).toBeCloseTo(5072.22, 6);
    expect(r.kernels!.byTaskType.AI_CORE!.us).toBeCloseTo(4872.937, 6);
    expect(r.kernels!.byTaskType.AI_VECTOR_CORE!.us).toBeCloseTo(116.002, 6);
    expect(r.kernels!.top[0]!.opType).toBe('FlashAttentionScoreGrad');
    expect(r.kernels!.top[0]!.us).toBeCloseTo(3038.44, 6);
    expect(ids(r)).toEqual(['dynamic-shape']);
    expect(advice(r, 'dynamic-shape').severity).toBe('high');
    expect(advice(r, 'dynamic-shape').share).toBeCloseTo(1, 12); // basis: all kernel time
  });

  it('trace_view.json (string ts, metadata, cpu_op): timeline read, no warnings, no advice', async () => {
    const r = await importProfile(join(F, 'trace_view_small'));
    expect(r.kernels).toBeNull();
    expect(r.timeline).toEqual({
      events: 6,
      opCompile: { count: 0, us: 0 },
      slowDataloader: [],
      processes: ['CANN', 'Ascend Hardware'],
      ops: [
        { name: 'Prefill_layer::Execute', us: 28.19, count: 1 },
        { name: 'aclnnGroupedMatmulV4', us: 28.19, count: 1 },
        { name: 'LmHead::Execute', us: 28.19, count: 1 },
        { name: 'aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul', us: 28.19, count: 1 },
      ],
      stepWindows: [], // no ProfilerStep# markers in this capture
    });
    expect(r.warnings).toEqual([]);
    expect(r.advice).toEqual([]);
  });

  it('cluster_analysis_output (16 ranks, 2 PP stages): rank rows only, slow rank per dimension, no slow link', async () => {
    const r = await importProfile(join(F, 'cluster_analysis_output_16rank'));
    expect(r.kind).toBe('cluster');
    expect(r.steps.map((s) => s.rank)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(r.steps[8]!.bubbleUs).toBeCloseTo(178320.2648359375, 9);
    expect(advice(r, 'slow-rank').evidence).toEqual([
      { step: 2, dimension: 'communication', maxRank: 11, minRank: 5, ratio: expect.any(Number) },
      { step: 2, dimension: 'free', maxRank: 13, minRank: 2, ratio: expect.any(Number) },
    ]);
    const dims = r.communication!.slowRank;
    expect(dims.find((d) => d.dimension === 'communication')!.ratio).toBeCloseTo(
      0.2619667262584382,
      12,
    );
    expect(dims.find((d) => d.dimension === 'free')!.ratio).toBeCloseTo(0.08652847009662627, 12);
    expect(dims.find((d) => d.dimension === 'computing')!.ratio).toBeCloseTo(
      0.014636065939826616,
      12,
    );
    // per-rank RDMA and SDMA bandwidth are close: slow-link does not fire
    expect(r.communication!.slowLink.map((l) => [l.transport, l.minRank, l.maxRank])).toEqual([
      ['RDMA', 1, 0],
      ['SDMA', 1, 0],
    ]);
    expect(r.communication!.slowLink[1]!.ratio).toBeLessThan(0.05);
    expect(ids(r)).toEqual(['communication.uncovered', 'slow-rank', 'overall.free']);
    expect(advice(r, 'overall.free').share).toBeCloseTo(0.22710055672460844, 12);
  });
});

describe('bad input: warnings naming file and line, everything readable still shown', () => {
  it('a 0-byte csv, an unknown column set and a timeline cut off mid-array', async () => {
    const d = scratch();
    const out = join(d, 'host_rank1_ascend_pt', 'ASCEND_PROFILER_OUTPUT');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'kernel_details.csv'), '');
    writeFileSync(join(out, 'op_statistic.csv'), 'Foo,Bar\n1,2\n');
    cpSync(
      join(F, 'torch_npu_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv'),
      join(out, 'step_trace_time.csv'),
    );
    const trace = readFileSync(join(F, 'trace_view_small/trace_view.json'), 'utf8');
    writeFileSync(join(out, 'trace_view.json'), trace.slice(0, 700));
    const r = await importProfile(d);
    expect(r.warnings.map((w) => [w.file, w.line, w.message.key])).toEqual([
      [
        'host_rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv',
        null,
        'stage-profiling:warn.empty',
      ],
      [
        'host_rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv',
        1,
        'stage-profiling:warn.unknownColumns',
      ],
      [
        'host_rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json',
        1,
        'stage-profiling:warn.truncated',
      ],
    ]);
    expect(r.warnings[2]!.message.params).toMatchObject({ events: 2 });
    expect(r.steps).toHaveLength(1); // the readable step trace is still there
    expect(r.timeline!.events).toBe(2);
    expect(r.ranks[0]!.rank).toBe(1);
  });

  it('quoted multi-line fields keep the line numbers of the rows after them', async () => {
    const d = scratch();
    writeFileSync(
      join(d, 'kernel_details.csv'),
      'Name,Type,Accelerator Core,Duration(us),Input Shapes\r\n' +
        'A,MatMul,AI_CORE,10,"""1,2;\r\n3,4"""\r\n' +
        'B,Cast,AI_CPU,\t5.5\t,N/A\r\n' +
        'C,Cast,AI_CPU,7\r\n',
    );
    const r = await importProfile(d);
    expect(r.kernels!.count).toBe(3);
    expect(r.kernels!.byTaskType.AI_CPU!.us).toBe(12.5);
    expect(r.warnings.map((w) => [w.line, w.message.key])).toEqual([
      [5, 'stage-profiling:warn.ragged'],
    ]);
  });

  it('ranks 0 and 2 of a three-rank run: the missing rank is named', async () => {
    const d = scratch();
    for (const rank of [0, 2]) {
      const dir = join(d, `node_${rank}_ascend_pt`);
      cpSync(join(F, 'torch_npu_level1_rank0_ascend_pt'), dir, { recursive: true });
      writeFileSync(join(dir, 'profiler_info_0.json'), JSON.stringify({ rank_id: rank }));
    }
    const r = await importProfile(d);
    expect(r.ranks.map((x) => x.rank)).toEqual([0, 2]);
    expect(r.warnings.map((w) => w.message)).toEqual([
      { key: 'stage-profiling:warn.missingRanks', params: { ranks: '1' } },
    ]);
    // two ranks with the same step: the slow-rank table has them
    expect(r.communication!.slowRank).toHaveLength(3);
  });

  it('a half-copied rank folder (no step_trace_time.csv) is named; its kernels are still read', async () => {
    const d = scratch();
    const out = join(d, 'rank_3_ascend_pt', 'ASCEND_PROFILER_OUTPUT');
    mkdirSync(out, { recursive: true });
    cpSync(
      join(F, 'torch_npu_level0_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv'),
      join(out, 'kernel_details.csv'),
    );
    const r = await importProfile(d);
    expect(r.warnings).toEqual([
      {
        file: 'rank_3_ascend_pt/ASCEND_PROFILER_OUTPUT',
        line: null,
        message: {
          key: 'stage-profiling:warn.missingFile',
          params: { file: 'step_trace_time.csv' },
        },
      },
    ]);
    expect(r.kernels!.count).toBe(191);
    expect(r.ranks[0]!.rank).toBe(3);
  });

  it("msprof-analyze's cluster_analysis_output beside the rank folders: steps are not counted twice", async () => {
    const d = scratch();
    cpSync(join(F, 'torch_npu_level1_rank0_ascend_pt'), join(d, 'node_rank0_ascend_pt'), {
      recursive: true,
    });
    cpSync(join(F, 'cluster_analysis_output_16rank'), join(d, 'cluster_analysis_output'), {
      recursive: true,
    });
    const r = await importProfile(d);
    expect(r.kind).toBe('mixed');
    expect(r.steps.map((s) => [s.rank, s.step])).toEqual([[0, 50]]);
    // the cluster's communication is still read
    expect(r.communication!.slowLink.map((l) => l.transport)).toEqual(['RDMA', 'SDMA']);
  });

  it('an empty folder says nothing was found', async () => {
    const r = await importProfile(scratch());
    expect(r.kind).toBe('empty');
    expect(r.warnings.map((w) => w.message.key)).toEqual(['stage-profiling:warn.nothing']);
  });
});

describe('op dispatch, dataloader and torch.profiler traces', () => {
  it('aclopCompileAndExecute ≥ 20 fires op-dispatch; a 12 ms dataloader call fires dataloader', async () => {
    const d = scratch();
    const ev = [
      { name: 'process_name', ph: 'M', pid: 1, args: { name: 'CANN' } },
      ...Array.from({ length: 25 }, (_, i) => ({
        name: 'AscendCL@aclopCompileAndExecute',
        ph: 'X',
        pid: 1,
        ts: String(1000 + i * 100),
        dur: 40,
      })),
      {
        name: 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__',
        ph: 'X',
        cat: 'cpu_op',
        ts: '1',
        dur: 12000,
      },
    ];
    writeFileSync(join(d, 'trace_view.json'), JSON.stringify(ev));
    const r = await importProfile(d);
    expect(r.timeline!.opCompile).toEqual({ count: 25, us: 1000 });
    expect(ids(r)).toEqual(['op-dispatch', 'dataloader']);
    expect(advice(r, 'op-dispatch').message.params).toEqual({ count: 25, threshold: 20 });
    // 19 calls do not
    writeFileSync(join(d, 'trace_view.json'), JSON.stringify(ev.slice(0, 20)));
    expect(ids(await importProfile(d))).toEqual([]);
  });

  it("torch.profiler's {traceEvents} export: ProfilerStep# times and aten ops, compared by name", async () => {
    const mk = (dir: string, scale: number) => {
      writeFileSync(
        join(dir, 'host_1.1700000000.pt.trace.json'),
        JSON.stringify({
          schemaVersion: 1,
          traceEvents: [
            { ph: 'X', cat: 'cpu_op', name: 'ProfilerStep#1', ts: 0, dur: 1000 * scale },
            { ph: 'X', cat: 'cpu_op', name: 'ProfilerStep#2', ts: 2000, dur: 1200 * scale },
            { ph: 'X', cat: 'cpu_op', name: 'aten::mm', ts: 10, dur: 300 * scale },
            { ph: 'X', cat: 'cpu_op', name: 'aten::softmax', ts: 400, dur: 50 },
          ],
        }),
      );
    };
    const gpu = scratch();
    const npu = scratch();
    mk(gpu, 1);
    mk(npu, 2);
    const a = await importProfile(gpu);
    const b = await importProfile(npu);
    expect(a.kind).toBe('torch');
    expect(a.stepTimes).toEqual([
      { rank: null, step: 1, us: 1000 },
      { rank: null, step: 2, us: 1200 },
    ]);
    const cmp = compareProfiles(a, b);
    // the legacy exporter (torch without kineto, Debian's 1.13): an array, no cat, pid "CPU functions"
    const legacy = scratch();
    writeFileSync(
      join(legacy, 'vm_1.17.pt.trace.json'),
      JSON.stringify([
        {
          name: 'ProfilerStep#0',
          ph: 'X',
          ts: 130,
          dur: 56,
          tid: 1,
          pid: 'CPU functions',
          args: {},
        },
        { name: 'aten::mm', ph: 'X', ts: 131, dur: 20, tid: 1, pid: 'CPU functions', args: {} },
      ]),
    );
    const l = await importProfile(legacy);
    expect(l.kind).toBe('torch');
    expect(l.stepTimes).toEqual([{ rank: null, step: 0, us: 56 }]);
    expect(l.timeline!.ops).toEqual([{ name: 'aten::mm', us: 20, count: 1 }]);
    expect(cmp.stepRatio).toBe(2);
    expect(cmp.byOpType).toEqual([
      { name: 'aten::mm', aUs: 300, bUs: 600, ratio: 2 },
      { name: 'aten::softmax', aUs: 50, bUs: 50, ratio: 1 },
    ]);
  });
});

describe('amw profile import / compare', () => {
  it('--json prints the documented document', async () => {
    const r = await amw([
      'profile',
      'import',
      join(F, 'torch_npu_level1_rank0_ascend_pt'),
      '--json',
    ]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown> & {
      kernels: Record<string, unknown>;
      advice: { id: string; message: string }[];
    };
    expect(Object.keys(doc)).toEqual(
      expect.arrayContaining(['source', 'kind', 'ranks', 'kernels', 'steps', 'advice', 'warnings']),
    );
    expect(Object.keys(doc.kernels)).toEqual(['count', 'totalUs', 'byTaskType', 'byOpType', 'top']);
    expect((doc.kernels.byTaskType as Record<string, unknown>).HCCL).toEqual({
      us: expect.any(Number),
      share: expect.any(Number),
    });
    expect((doc.steps as object[])[0]).toEqual({
      rank: 0,
      step: 50,
      computingUs: 8873.756000000001,
      communicationNotOverlappedUs: 101963.203,
      overlappedUs: 4028.6750000000175,
      freeUs: 25744.050000000003,
      bubbleUs: 0,
    });
    expect(doc.advice.find((a) => a.id === 'overall.free')!.message).toBe(
      'Free (idle) time is 18.85% of the step time, above the 10% threshold: the device waits for the host.',
    );
    const zh = await amw([
      'profile',
      'import',
      join(F, 'torch_npu_level1_rank0_ascend_pt'),
      '--json',
      '--lang',
      'zh-CN',
    ]);
    expect((JSON.parse(zh.stdout) as typeof doc).advice[1]!.message).toContain(
      '空闲时间占单步耗时的 18.85%',
    );
  });

  it('compare of two folders: step ratio and per-category difference', async () => {
    const r = await amw([
      'profile',
      'compare',
      join(F, 'torch_npu_level0_rank0_ascend_pt'),
      join(F, 'torch_npu_level1_rank0_ascend_pt'),
      '--json',
    ]);
    expect(r.code).toBe(0);
    const cmp = JSON.parse(r.stdout) as ReturnType<typeof compareProfiles>;
    expect(cmp.stepRatio).toBeCloseTo(136581.009 / 116251.182, 6);
    expect(cmp.categories[0]).toMatchObject({ name: 'computing' });
    expect(cmp.categories[0]!.diffUs).toBeCloseTo(8873.756 - 8827.473, 6);
    expect(cmp.advice).toEqual({
      fixed: [],
      added: ['dynamic-shape', 'env-vars'],
      kept: ['communication.uncovered', 'overall.free'],
    });
  });

  it('the text output names the advice and the warnings', async () => {
    const r = await amw(['profile', 'import', join(F, 'torch_npu_megatron_rank0')]);
    expect(r.stdout).toContain('[low] aicpu: 2 kernels ran on the AI CPU (Cast)');
    expect(r.stderr).toContain('ASCEND_PROFILER_OUTPUT/kernel_details.csv:17');
  });
});

describe('the step-time check against the GPU baseline of the project', () => {
  it('an import into a session of a project with baseline.stepTimeMs: a ratio over the target fails', async () => {
    const { createCore } = await import('../../api/core');
    const core = createCore({ env: { AMW_HOME: scratch() } as NodeJS.ProcessEnv });
    try {
      await core.call('projects.create', { name: 'gpt', baseline: { stepTimeMs: 100 } });
      const session = await core.call('sessions.create', { project: 'gpt' });
      const started = await core.call('profiling.import', {
        dir: join(F, 'torch_npu_level1_rank0_ascend_pt'),
        sessionId: session.id,
      });
      await core.jobs.wait(started.jobId);
      const run = await core.call('stages.get', { id: started.stageRunId });
      const st = run.checks.find((c) => c.id === 'prof.step-time')!;
      expect(st.status).toBe('fail'); // 136.58 ms on the NPU against 100 ms: 1.37x > 1.2x
      expect(st.evidence).toMatchObject({ gpuUs: 100_000, target: 1.2 });
      expect((st.evidence as { ratio: number }).ratio).toBeCloseTo(1.36581009, 6);
      expect(st.summary).toMatchObject({
        key: 'stage-profiling:check.stepTime',
        params: { npuMs: 136.58, gpuMs: 100, ratio: 1.37, target: 1.2 },
      });
    } finally {
      await core.close();
    }
  }, 60_000);
});

describe('a failed import', () => {
  it('is an error run that is never offered for comparison, and says why in the language shown', async () => {
    const { createCore } = await import('../../api/core');
    const { explainError, translator } = await import('../../../../shared/i18n');
    const { STAGE_NAMESPACES } = await import('../../../../shared/stages');
    const core = createCore({ env: { AMW_HOME: scratch() } as NodeJS.ProcessEnv });
    try {
      const good = await core.call('profiling.import', {
        dir: join(F, 'torch_npu_level1_rank0_ascend_pt'),
      });
      await core.jobs.wait(good.jobId);
      const bad = await core.call('profiling.import', {
        dir: join(scratch(), 'not-there'),
        sessionId: good.sessionId,
      });
      expect((await core.jobs.wait(bad.jobId)).status).toBe('failed');
      expect((await core.call('stages.get', { id: bad.stageRunId })).status).toBe('error');
      const listed = await core.call('profiling.list', { sessionId: good.sessionId, limit: 10 });
      expect(listed.map((p) => p.stageRunId)).toEqual([good.stageRunId]);
      const refused = await core.dispatch(
        'profiling.compare',
        { a: good.stageRunId, b: bad.stageRunId },
        { transport: 'test' },
      );
      if (refused.ok) throw new Error('compared a run without a profile');
      const zh = explainError(translator('zh-CN', STAGE_NAMESPACES), refused.error, 'zh-CN');
      expect(zh).toBe(
        `未找到：阶段运行 ${bad.stageRunId} 的结果为“出错”，没有保存性能数据：没有可显示或比较的内容。`,
      );
      expect(refused.error.message).toBe(
        `Stage run ${bad.stageRunId} ended as “error” and stored no profile: there is nothing to show or compare.`,
      );
    } finally {
      await core.close();
    }
  }, 60_000);
});

describe('profiling.import stores an import as a stage run of a session', () => {
  it('checks, the stored profile, the CLI --session path and the report section', async () => {
    const { createCore } = await import('../../api/core');
    const home = scratch();
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      const started = await core.call('profiling.import', {
        dir: join(F, 'torch_npu_level1_rank0_ascend_pt'),
      });
      const job = await core.jobs.wait(started.jobId);
      expect(job.status).toBe('succeeded');
      const run = await core.call('stages.get', { id: started.stageRunId });
      expect(run.stage).toBe('profiling');
      expect(Object.fromEntries(run.checks.map((c) => [c.id, c.status]))).toEqual({
        'prof.run': 'pass',
        'prof.aicpu': 'pass',
        'prof.free': 'warn',
        'prof.communication': 'warn',
        'prof.dynamic-shapes': 'warn',
        'prof.step-time': 'skip',
      });
      expect(run.status).toBe('warn');
      const p = await core.call('profiling.get', { stageRunId: started.stageRunId });
      expect(p.kernels!.count).toBe(191);
      const md = await core.call('reports.export', {
        source: { sessionId: started.sessionId },
        format: 'md',
        language: 'zh-CN',
        hideNames: false,
      });
      expect(md.text).toContain('## 性能分析');
      // Markdown escapes host text (underscores would be emphasis): read it as a renderer would
      expect((md.text ?? '').replace(/\\(.)/g, '$1')).toContain('hcom_allReduce__586_0_1');
      expect(md.text).toContain('空闲时间占单步耗时的 18.85%');
      const html = await core.call('reports.export', {
        source: { sessionId: started.sessionId },
        format: 'html',
        language: 'en',
        hideNames: false,
      });
      expect(html.text).toContain('<section id="profiling">');
    } finally {
      await core.close();
    }
    const cli = await amw(
      ['profile', 'import', join(F, 'cluster_analysis_output_16rank'), '--store', '--json'],
      { AMW_HOME: home },
    );
    expect(cli.code).toBe(0);
    expect(cli.stderr).toMatch(/^session \d+, run \d+\n$/);
    expect((JSON.parse(cli.stdout) as { steps: unknown[] }).steps).toHaveLength(16);
    // stored runs compare by id, and a stored run against a folder
    const l0 = await amw(
      ['profile', 'import', join(F, 'torch_npu_level0_rank0_ascend_pt'), '--store'],
      {
        AMW_HOME: home,
      },
    );
    const runOf = (stderr: string) => /run (\d+)/.exec(stderr)![1]!;
    const l1 = await amw(
      ['profile', 'import', join(F, 'torch_npu_level1_rank0_ascend_pt'), '--store'],
      {
        AMW_HOME: home,
      },
    );
    const byId = await amw(['profile', 'compare', runOf(l0.stderr), runOf(l1.stderr), '--json'], {
      AMW_HOME: home,
    });
    expect(byId.code).toBe(0);
    const cmp = JSON.parse(byId.stdout) as ReturnType<typeof compareProfiles>;
    expect(cmp.stepRatio).toBeCloseTo(136581.009 / 116251.182, 6);
    expect(cmp.byTaskType.map((r) => r.name)).toEqual(
      expect.arrayContaining(['HCCL', 'N/A', 'AI_VECTOR_CORE']),
    );
    const mixed = await amw(
      [
        'profile',
        'compare',
        runOf(l0.stderr),
        join(F, 'torch_npu_level1_rank0_ascend_pt'),
        '--json',
      ],
      { AMW_HOME: home },
    );
    expect((JSON.parse(mixed.stdout) as typeof cmp).stepRatio).toBeCloseTo(cmp.stepRatio!, 12);
    const bad = await amw(['profile', 'compare', 'nope', runOf(l0.stderr)], { AMW_HOME: home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('nope is neither a folder nor a stored run id');
  }, 60_000);
});
