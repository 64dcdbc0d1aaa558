import { en } from '../support/text';
import { cpSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import type { StageRunRecord } from '../../shared/api';
import type { OpRow, OpsResult } from '../../shared/stages/ops/api';
import { amw } from '../support/cli';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
const OPS = join(__dirname, '../../resources/knowledge/ops');
const list = (tag: string) =>
  new Set(
    readFileSync(join(OPS, `npu_native_ops_${tag}.txt`), 'utf8')
      .split('\n')
      .filter(Boolean),
  );

let sim: SimHost;
let core: Core;
let home: string;

async function runOps(entry: string, extra: { backward?: boolean; torchNpu?: string } = {}) {
  const started = await core.call('stages.run', { host: 'npu', stage: 'ops', entry, ...extra });
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return {
    run: job.result as StageRunRecord,
    ops: await core.call('ops.get', { stageRunId: started.stageRunId }),
    stageRunId: started.stageRunId,
  };
}
const row = (r: OpsResult, op: string, overload = 'default'): OpRow => {
  const found = r.ops.find((o) => o.op === op && o.overload === overload);
  if (!found) throw new Error(`${op}.${overload} not traced: ${r.ops.map((o) => o.op).join(' ')}`);
  return found;
};

d('ops stage: trace on a host with real CPU PyTorch, classify for the target torch_npu', () => {
  beforeAll(async () => {
    sim = await startSimHost('ops-host', 'ascend-910b'); // torch_npu 2.1.0.post12 (stand-in)
    const models = join(sim.dir, 'home', 'models');
    cpSync(join(__dirname, '../fixtures/ops-models'), models, { recursive: true });
    const { uid, gid } = statSync(join(sim.dir, 'home'));
    chownSync(models, uid, gid);
    home = mkdtempSync(join(tmpdir(), 'amw-ops-'));
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(core, sim, { name: 'npu' });
  }, 120_000);

  afterAll(async () => {
    await core?.close();
    await sim?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('attention with relative bias, masked softmax, gather, EmbeddingBag, LayerNorm: classes from the real op list, dynamic shapes named', async () => {
    const { run, ops } = await runOps('models/models.py:attention', { backward: true });
    expect(ops.targetTorchNpu).toBe('2.1.0.post12'); // the host's torch_npu, from its inventory
    expect(ops.opList).toBe('torch2.1.0_v7.2.0');
    const v21 = list('torch2.1.0_v7.2.0');
    for (const [op, key] of [
      ['aten::bmm', 'bmm'],
      ['aten::gather', 'gather'],
      ['aten::native_layer_norm', 'native_layer_norm'],
      ['aten::index_select', 'index_select'],
      ['aten::_softmax', '_softmax'],
    ] as const) {
      expect(v21.has(key), key).toBe(true);
      expect(row(ops, op).class, op).toBe('direct');
    }
    // EmbeddingBag has a kernel, but Ascend's support table marks F.embedding_bag ✘ on Atlas A2
    const bag = row(ops, 'aten::_embedding_bag');
    expect(v21.has('_embedding_bag')).toBe(true);
    expect(bag.class).toBe('needs-change');
    expect(bag.reason).toContain('Atlas A2');
    // masked_fill has no kernel of its own in the list: the host says it is composite, and it
    // is only as good as what it calls (clone, masked_fill_)
    const mf = row(ops, 'aten::masked_fill', 'Scalar');
    expect(v21.has('masked_fill.Scalar')).toBe(false);
    expect(mf.composite).toBe('explicit');
    expect(mf.reason).toContain('aten::masked_fill_.Scalar');
    expect(mf.class, mf.reason).toBe('direct');
    // where each op comes from: module path and the source line
    expect(row(ops, 'aten::native_layer_norm').modules).toContain('norm');
    expect(row(ops, 'aten::gather').sources[0]).toEqual({
      at: 'models.py:34',
      text: expect.stringContaining('torch.gather(out, 1'),
    });
    // three sequence lengths: the attention matmuls see three shapes; the input that varies is named
    const bmm = row(ops, 'aten::bmm');
    expect(bmm.dynamic).toBe(true);
    expect(bmm.distinctShapes).toBeGreaterThanOrEqual(3);
    expect(ops.variableInputs).toEqual([
      {
        arg: 0,
        dims: [1],
        seen: [
          [2, 5],
          [2, 9],
          [2, 17],
        ],
      },
    ]);
    expect(run.checks.find((c) => c.id === 'ops.dynamic-shapes')!.status).toBe('warn');
    expect(row(ops, 'aten::_embedding_bag').replacement).toBeTruthy();
    // backward ran too
    expect(ops.ops.some((o) => o.op === 'aten::native_layer_norm_backward')).toBe(true);
  }, 120_000);

  it('an op without an NPU kernel in 2.1 falls back to the CPU; torch_npu 2.9 removes the fallback', async () => {
    const { run, ops, stageRunId } = await runOps('models/models.py:quantized');
    expect(list('torch2.1.0_v7.2.0').has('int_repr')).toBe(false);
    expect(list('torch2.9.0_v26.1.0').has('int_repr')).toBe(true);
    expect(row(ops, 'aten::int_repr').class).toBe('cpu-fallback');
    expect(run.checks.find((c) => c.id === 'ops.cpu-fallback')!.status).toBe('warn');
    const later = await core.call('ops.get', { stageRunId, torchNpu: '2.9.0.post6' });
    expect(later.opList).toBe('torch2.9.0_v26.1.0');
    expect(row(later, 'aten::int_repr').class).toBe('direct');
    const cmp = await core.call('ops.compare', {
      a: stageRunId,
      b: stageRunId,
      torchNpuA: '2.1.0',
      torchNpuB: '2.9.0',
    });
    expect(cmp.rows.filter((r) => r.change === 'improved').map((r) => r.op)).toEqual(
      expect.arrayContaining(['aten::int_repr', 'aten::dequantize']),
    );
    expect(cmp.b.cpuFallback).toBeLessThan(cmp.a.cpuFallback);
  }, 120_000);

  it('sparse ops are unsupported (they raise on the NPU): the stage fails', async () => {
    const { run, ops } = await runOps('models/models.py:sparse');
    expect(ops.ops.some((o) => o.class === 'unsupported')).toBe(true);
    expect(run.status).toBe('fail');
  }, 120_000);

  it('a broken entry reports the Python traceback as the stage evidence', async () => {
    const { run } = await runOps('models/models.py:broken');
    const trace = run.checks.find((c) => c.id === 'ops.trace')!;
    expect(trace.status).toBe('fail');
    expect(en(trace.summary)).toContain('FileNotFoundError');
    expect((trace.evidence as { traceback: string }).traceback).toContain(
      'model weights not found',
    );
    expect(run.status).toBe('fail');
    const missing = await runOps('models/nope.py:build');
    expect(en(missing.run.checks[0]!.summary)).toMatch(/No such file|FileNotFoundError/);
  }, 120_000);

  it('--script traces a whole script run, optimizer step included', async () => {
    const started = await core.call('stages.run', {
      host: 'npu',
      stage: 'ops',
      script: 'models/train_script.py',
    });
    const job = await core.jobs.wait(started.jobId);
    expect(job.status).toBe('succeeded');
    const ops = await core.call('ops.get', { stageRunId: started.stageRunId });
    expect(ops.error).toBeNull();
    expect(ops.entry).toBe('models/train_script.py');
    // the SGD step and the backward pass are part of a script run
    expect(ops.ops.some((o) => o.op === 'aten::add_')).toBe(true);
    expect(row(ops, 'aten::bmm').sources[0]!.at).toMatch(/^models\.py:\d+$/);
  }, 120_000);

  it('on an NPU host, what torch_npu itself says falls back to the CPU is taken as observed', async () => {
    const alarm = await startSimHost('ops-alarm', 'chip-alarm'); // its torch_npu warns on aten::nonzero
    try {
      cpSync(join(__dirname, '../fixtures/ops-models'), join(alarm.dir, 'home', 'models'), {
        recursive: true,
      });
      await registerSimHost(core, alarm, { name: 'alarm' });
      const started = await core.call('stages.run', {
        host: 'alarm',
        stage: 'ops',
        entry: 'models/models.py:on_npu',
      });
      const job = await core.jobs.wait(started.jobId);
      expect(job.status).toBe('succeeded');
      const ops = await core.call('ops.get', { stageRunId: started.stageRunId });
      expect(list('torch2.1.0_v7.2.0').has('nonzero')).toBe(true); // the list alone says direct
      const nz = row(ops, 'aten::nonzero');
      expect(nz.class).toBe('cpu-fallback');
      expect(nz.reason).toContain('observed on the host');
      // asked for another version, the list decides again
      const other = await core.call('ops.get', {
        stageRunId: started.stageRunId,
        torchNpu: '2.9.0',
      });
      expect(row(other, 'aten::nonzero').class).toBe('direct');
    } finally {
      await alarm.stop();
    }
  }, 120_000);

  it('amw run --stage ops --json prints the documented document', async () => {
    const r = await amw(
      [
        'run',
        'npu',
        '--stage',
        'ops',
        '--entry',
        'models/models.py:quantized',
        '--torch-npu',
        '2.7.1',
        '--json',
      ],
      { AMW_HOME: home },
    );
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as Record<string, unknown> & {
      ops: Record<string, unknown>[];
    };
    expect(doc).toMatchObject({ stage: 'ops', host: 'npu', targetTorchNpu: '2.7.1' });
    expect(Object.keys(doc.breakdown as object).sort()).toEqual([
      'cpuFallback',
      'direct',
      'needsChange',
      'unsupported',
    ]);
    expect(doc.ops[0]).toEqual(
      expect.objectContaining({ op: expect.stringMatching(/^aten::/), class: expect.any(String) }),
    );
    expect(r.code).toBe(0);
  }, 120_000);
});
