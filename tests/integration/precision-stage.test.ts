import {
  chownSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
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
import { amw } from '../support/cli';
import { PrecisionRepository } from '../../electron/core/stages/precision/repository';
import { ArtifactStore } from '../../electron/core/db/artifacts';
import { openStore } from '../../electron/core/db/open';
import { en, zh } from '../support/text';
import { REFERENCE } from '../support/reference';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
const FIXTURES = `${REFERENCE}/fixtures/precision`;

let cpu: SimHost; // the baseline: a plain Linux box, no Ascend, CPU torch
let npu: SimHost; // an NPU-profile host (torch_npu stand-in, no real NPU: it runs on the CPU)
let core: Core;
let home: string;

function withModels(sim: SimHost) {
  const models = join(sim.dir, 'home', 'models');
  cpSync(join(__dirname, '../fixtures/precision-models'), models, { recursive: true });
  const { uid, gid } = statSync(join(sim.dir, 'home'));
  chownSync(models, uid, gid);
}

async function runPrecision(
  host: string,
  entry: string | null,
  extra: {
    dtype?: 'fp32' | 'bf16' | 'fp16';
    mode?: 'statistics' | 'tensor';
    backward?: boolean;
    script?: string;
    steps?: number;
    ops?: string[];
    modules?: string[];
    sessionId?: number;
  } = {},
) {
  const started = await core.call('stages.run', {
    stage: 'precision',
    host,
    baseline: 'cpu',
    ...(entry ? { entry } : {}),
    ...extra,
  });
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return {
    run: job.result as StageRunRecord,
    view: await core.call('precision.get', { stageRunId: started.stageRunId }),
    stageRunId: started.stageRunId,
  };
}
const check = (run: StageRunRecord, id: string) => run.checks.find((c) => c.id === id)!;
const leftovers = (sim: SimHost) => {
  const dir = join(sim.dir, 'home', '.amw-precision');
  return existsSync(dir) ? readdirSync(dir) : [];
};

d('precision stage: the same model on a CPU baseline host and an NPU-profile host', () => {
  beforeAll(async () => {
    [cpu, npu] = await Promise.all([
      startSimHost('prec-cpu', 'no-cann'),
      startSimHost('prec-npu', 'ascend-910b'),
    ]);
    withModels(cpu);
    withModels(npu);
    home = mkdtempSync(join(tmpdir(), 'amw-precision-'));
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(core, cpu, { name: 'cpu' });
    await registerSimHost(core, npu, { name: 'npu' });
  }, 180_000);

  afterAll(async () => {
    await core?.close();
    await Promise.all([cpu?.stop(), npu?.stop()]);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('fp32 against fp32 on the same kernels: every module passes with error 0; files cleaned up', async () => {
    const { run, view } = await runPrecision('npu', 'models/models.py:tiny', { backward: true });
    expect(run.status, JSON.stringify(run.checks.map((c) => [c.id, c.status, en(c.summary)]))).toBe(
      'pass',
    );
    // embed, pre, relu, block.proj, block.act, block.back, block.norm, block, head, the model; then grads
    expect(
      view.modules
        .filter((m) => m.kind === 'forward')
        .slice(0, 10)
        .map((m) => m.module),
    ).toEqual([
      'embed',
      'pre',
      'relu',
      'block.proj',
      'block.act',
      'block.back',
      'block.norm',
      'block',
      'head',
      '(model)',
    ]);
    expect(view.modules.some((m) => m.kind === 'grad' && m.module === 'head.weight (grad)')).toBe(
      true,
    );
    expect(view.counts).toEqual({ pass: view.modules.length, warning: 0, error: 0 });
    expect(view.modules.every((m) => m.statDrift === 0)).toBe(true);
    expect(view.firstDivergence).toBeNull();
    expect(view.inputsSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(view.modules[3]!.source).toBe('models.py:17'); // block.proj is called in Block.forward
    const dump = check(run, 'precision.dump');
    // the NPU-profile host has torch_npu, but no NPU this machine: it says so and ran on the CPU
    expect((dump.evidence as { target: { device: string; note: string } }).target.device).toBe(
      'cpu',
    );
    expect((dump.evidence as { target: { note: string } }).target.note).toMatch(/npu/i);
    expect(en(dump.summary)).toContain('npu has no usable NPU: the dump ran on the CPU');
    expect(en(check(run, 'precision.determinism').summary)).toBe(
      'Seed 1234 fixed and deterministic algorithms on, on both hosts.',
    );
    expect(leftovers(cpu)).toEqual([]);
    expect(leftovers(npu)).toEqual([]);
    // every error is 0: the report's chart still draws a bar per module, on the floor marked 0
    const html = await core.call('reports.export', {
      source: { sessionId: run.sessionId },
      format: 'html',
      language: 'en',
    });
    const chart = /<figure class="precision-chart">.*?<\/figure>/s.exec(html.text ?? '')![0]!;
    const bars = [...chart.matchAll(/<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"/g)];
    expect(bars).toHaveLength(view.modules.length);
    expect(bars.every((b) => Number(b[1]) > 0)).toBe(true);
    expect(chart).toContain('class="zero-floor"');
    expect(chart).toMatch(/>0<\/text>/);
    expect(chart).toContain('errors of exactly 0 are drawn on the floor line marked 0');
  }, 180_000);

  it('weights and inputs really travel: a model built from OS entropy still matches exactly', async () => {
    const a = await runPrecision('npu', 'models/models.py:unseeded');
    const b = await runPrecision('npu', 'models/models.py:unseeded');
    for (const r of [a, b]) {
      expect(r.view.counts.error + r.view.counts.warning).toBe(0);
      expect(r.view.modules.every((m) => m.statDrift === 0)).toBe(true);
    }
    // two builds of the model differ (so agreement above is the transfer's doing)
    expect(a.view.modules[0]!.baseline!.mean).not.toBe(b.view.modules[0]!.baseline!.mean);
    expect(a.view.inputsSha256).not.toBe(b.view.inputsSha256);
  }, 180_000);

  it('tensor mode: msprobe metrics per module, cosine 1 and MaxAbsErr 0 on the same kernels', async () => {
    const { view } = await runPrecision('npu', 'models/models.py:tiny', { mode: 'tensor' });
    expect(view.mode).toBe('tensor');
    for (const m of view.modules) {
      expect(m.cosine, m.module).toBeCloseTo(1, 12);
      expect(m.maxAbsErr).toBe(0);
      expect(m.oneThousandthRatio).toBe(1);
      expect(m.result).toBe('pass');
    }
  }, 180_000);

  it('bf16 autocast on the target: real drift reported as warnings within bf16 tolerance', async () => {
    const { run, view } = await runPrecision('npu', 'models/models.py:mlp', { dtype: 'bf16' });
    expect(view.modules[0]!.result).toBe('pass'); // the embedding stays fp32 under autocast
    const up = view.modules.find((m) => m.module === 'up')!;
    expect(up.target!.dtype).toBe('bfloat16');
    expect(up.result).toBe('warning');
    expect(up.statDrift).toBeGreaterThan(1e-6);
    expect(view.counts.error).toBe(0);
    expect(view.firstDivergence!.module).toBe('up');
    expect(check(run, 'precision.first-divergence').status).toBe('warn');
    expect(check(run, 'precision.amp-policy').status).toBe('warn'); // autocast ran on the CPU, not an NPU
  }, 180_000);

  it('a dump too large for stdout travels as a file: 16,004 module calls compared', async () => {
    const { run, view } = await runPrecision('npu', 'models/models.py:deep');
    expect(run.status, JSON.stringify(run.checks.map((c) => [c.id, en(c.summary)]))).toBe('pass');
    expect(view.modules.length).toBe(4 * 4001);
    expect(view.modules[16003]!.module).toBe('(model) #4');
    expect(leftovers(npu)).toEqual([]);
  }, 180_000);

  it('script mode: the training script runs as-is, its model hooked as called, stopped after the steps asked for', async () => {
    const { run, view } = await runPrecision('npu', null, {
      script: 'models/train.py',
      steps: 2,
      backward: true,
    });
    expect(run.status, JSON.stringify(run.checks.map((c) => [c.id, en(c.summary)]))).toBe('pass');
    const forward = view.modules.filter((m) => m.kind === 'forward');
    expect(forward.slice(0, 10).map((m) => m.module)).toEqual([
      'embed',
      'pre',
      'relu',
      'block.proj',
      'block.act',
      'block.back',
      'block.norm',
      'block',
      'head',
      '(model)',
    ]);
    expect(forward.map((m) => m.module)).toContain('(model) #2');
    expect(forward.map((m) => m.module)).not.toContain('(model) #3');
    // gradients of the first backward, per parameter; weights from OS entropy still match exactly
    expect(view.modules.some((m) => m.kind === 'grad' && m.module === 'head.weight (grad)')).toBe(
      true,
    );
    expect(view.counts).toEqual({ pass: view.modules.length, warning: 0, error: 0 });
    expect(view.modules.every((m) => m.statDrift === 0)).toBe(true);
    expect(view.entry).toBe('models/train.py');
    expect(en(check(run, 'precision.dump').summary)).toContain(
      "Script mode (2 call(s) of the model recorded): the weights travelled from the baseline; the inputs are the script's own, made under the same seed 1234.",
    );
    // stopped at the third call of its model: the end of the script never ran on either side
    for (const sim of [cpu, npu])
      expect(existsSync(join(sim.dir, 'home', 'models', 'finished.txt'))).toBe(false);
    expect(leftovers(cpu)).toEqual([]);
    expect(leftovers(npu)).toEqual([]);
  }, 180_000);

  it('a script that calls no nn.Module: the dump fails naming the script', async () => {
    const file = join(npu.dir, 'home', 'models', 'nomodel.py');
    for (const sim of [cpu, npu]) {
      const f = join(sim.dir, 'home', 'models', 'nomodel.py');
      writeFileSync(f, 'print("no model here")\n');
      const { uid, gid } = statSync(join(sim.dir, 'home'));
      chownSync(f, uid, gid);
    }
    expect(existsSync(file)).toBe(true);
    const { run } = await runPrecision('npu', null, { script: 'models/nomodel.py' });
    const dump = check(run, 'precision.dump');
    expect(dump.status).toBe('fail');
    expect(en(dump.summary)).toContain(
      'models/nomodel.py ran to its end without calling any nn.Module: nothing to compare',
    );
  }, 180_000);

  it('a broken entry: the traceback of the side that failed is the evidence', async () => {
    const { run } = await runPrecision('npu', 'models/models.py:broken');
    const dump = check(run, 'precision.dump');
    expect(dump.status).toBe('fail');
    expect(en(dump.summary)).toContain('FileNotFoundError: model weights not found');
    expect((dump.evidence as { side: string }).side).toBe('baseline');
    expect(run.status).toBe('fail');
  }, 180_000);

  it("the target's process killed mid-dump: a clear failure naming the host, the baseline's dump kept", async () => {
    for (const sim of [cpu, npu]) {
      const f = join(sim.dir, 'home', 'models', 'killed.py');
      // where torch_npu is installed (the NPU-profile host) the process ends abruptly, as if killed
      writeFileSync(
        f,
        'import importlib.util, os\nimport torch\nfrom torch import nn\n\ndef build():\n    if importlib.util.find_spec("torch_npu"):\n        os._exit(9)\n    return nn.Sequential(nn.Linear(4, 4)), [(torch.randn(2, 4),)]\n',
      );
      const { uid, gid } = statSync(join(sim.dir, 'home'));
      chownSync(f, uid, gid);
    }
    const { run, view, stageRunId } = await runPrecision('npu', 'models/killed.py:build');
    expect(run.status).toBe('fail');
    const dump = check(run, 'precision.dump');
    expect((dump.evidence as { side: string }).side).toBe('target');
    expect(en(dump.summary)).toContain('The model failed on the target host npu');
    expect(en(dump.summary)).toContain('The dump on npu printed no result.');
    expect(view.modules).toEqual([]);
    // what the baseline measured is stored with the run
    const store = openStore(join(home, 'amw.db'));
    const dumps = new PrecisionRepository(store.db, new ArtifactStore(store.db, home)).dumps(
      stageRunId,
    );
    store.db.close();
    expect(dumps.baseline!.modules.map((m) => m.module)).toEqual(['0', '']);
    expect(dumps.target!.error!.type).toBe('PROBE_FAILED');
    expect(leftovers(cpu)).toEqual([]);
    expect(leftovers(npu)).toEqual([]);
  }, 180_000);

  it('a model whose modules differ between the two sides: the parameters only one side has are named', async () => {
    const write = (sim: SimHost, extra: string) => {
      const file = join(sim.dir, 'home', 'models', 'differs.py');
      writeFileSync(
        file,
        `import torch\nfrom torch import nn\n\ndef build():\n    m = nn.Sequential(nn.Linear(4, 4)${extra})\n    return m, [(torch.randn(2, 4),)]\n`,
      );
      const { uid, gid } = statSync(join(sim.dir, 'home'));
      chownSync(file, uid, gid);
    };
    write(cpu, '');
    write(npu, ', nn.Linear(4, 4)');
    const { run } = await runPrecision('npu', 'models/differs.py:build');
    const dump = check(run, 'precision.dump');
    expect(dump.status).toBe('fail');
    expect(en(dump.summary)).toContain('the model differs between the two sides');
    expect(en(dump.summary)).toContain("'1.weight'");
    expect((dump.evidence as { side: string }).side).toBe('target');
    expect(leftovers(cpu)).toEqual([]);
    expect(leftovers(npu)).toEqual([]);
  }, 180_000);

  it('shapes that do not match: a parameter named with both shapes; an output named with both shapes, earlier modules kept', async () => {
    const write = (sim: SimHost, name: string, body: string) => {
      const file = join(sim.dir, 'home', 'models', name);
      writeFileSync(file, body);
      const { uid, gid } = statSync(join(sim.dir, 'home'));
      chownSync(file, uid, gid);
    };
    const head = 'import torch\nfrom torch import nn\n\n';
    write(
      cpu,
      'widths.py',
      `${head}def build():\n    return nn.Sequential(nn.Linear(4, 4)), [(torch.randn(2, 4),)]\n`,
    );
    write(
      npu,
      'widths.py',
      `${head}def build():\n    return nn.Sequential(nn.Linear(4, 3)), [(torch.randn(2, 4),)]\n`,
    );
    const widths = await runPrecision('npu', 'models/widths.py:build');
    const dump = check(widths.run, 'precision.dump');
    expect(dump.status).toBe('fail');
    expect(en(dump.summary)).toContain(
      'the model differs between the two sides: 0.weight is [4, 4] on the baseline and [3, 4] on the target',
    );
    // same weights, a forward that reshapes on the target only
    const model = (flat: boolean) =>
      `${head}class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(4, 4)\n        self.out = nn.Linear(4, 4)\n\n    def forward(self, x):\n        y = self.out(self.lin(x))\n        return ${flat ? 'y.reshape(-1)' : 'y'}\n\n\ndef build():\n    return M(), [(torch.randn(2, 4),)]\n`;
    write(cpu, 'reshape.py', model(false));
    write(npu, 'reshape.py', model(true));
    const { run, view } = await runPrecision('npu', 'models/reshape.py:build');
    expect(view.modules.map((m) => [m.module, m.result])).toEqual([
      ['lin', 'pass'],
      ['out', 'pass'],
      ['(model)', 'error'],
    ]);
    expect(en(check(run, 'precision.first-divergence').summary)).toContain(
      'First divergence: (model) (error)',
    );
    expect(en(check(run, 'precision.first-divergence').summary)).toContain(
      'shape [8] against [2,4]',
    );
  }, 180_000);

  it('NaN/Inf: the first module where they appear is named', async () => {
    const { run, view } = await runPrecision('npu', 'models/models.py:overflow');
    const o = check(run, 'precision.overflow');
    expect(o.status).toBe('fail');
    expect((o.evidence as { module: string }).module).toBe('block.back');
    expect(en(o.summary)).toContain('block.back');
    // both sides overflow alike: NaN on both is not a divergence of the target
    expect(view.modules.find((m) => m.module === 'block.back')!.target!.inf).toBeGreaterThan(0);
  }, 180_000);

  it('a torch_npu stand-in that perturbs GELU (test double): the first divergence is exactly the GELU', async () => {
    const odd = await startSimHost('prec-odd', 'npu-perturbed-gelu');
    try {
      withModels(odd);
      await registerSimHost(core, odd, { name: 'odd' });
      const { run, view } = await runPrecision('odd', 'models/models.py:tiny');
      expect(view.firstDivergence).toMatchObject({
        module: 'block.act',
        result: 'error',
        source: 'models.py:17',
      });
      const at = view.modules.findIndex((m) => m.module === 'block.act');
      expect(view.modules.slice(0, at).map((m) => m.result)).toEqual([
        'pass',
        'pass',
        'pass',
        'pass',
      ]);
      expect(check(run, 'precision.first-divergence').status).toBe('fail');
      expect(en(check(run, 'precision.first-divergence').summary)).toContain(
        'First divergence: block.act',
      );
      expect(run.status).toBe('fail');
      // with a code scan of the model in the session, the first divergence links into the review
      const scan = await core.call('code.scan', {
        path: join(__dirname, '../fixtures/precision-models'),
        sessionId: run.sessionId,
      });
      const scanned = await core.jobs.wait(scan.jobId);
      expect(scanned.status).toBe('succeeded');
      const linked = await core.call('precision.get', { stageRunId: view.stageRunId });
      expect(linked.firstDivergence!.review).toEqual({
        scanId: (scanned.result as { scanId: number }).scanId,
        file: 'models.py',
        line: 17,
      });
      const history = await core.call('precision.history', { sessionId: run.sessionId });
      expect(history[0]).toMatchObject({ host: 'odd', firstDivergence: 'block.act' });
      // the report: first divergence, the per-layer chart inline, the checks
      const report = await core.call('reports.build', {
        source: { sessionId: run.sessionId },
        language: 'en',
      });
      const section = (
        report as unknown as { precision: { firstDivergence: { module: string } }[] }
      ).precision;
      expect(section[0]!.firstDivergence.module).toBe('block.act');
      const html = await core.call('reports.export', {
        source: { sessionId: run.sessionId },
        format: 'html',
        language: 'en',
      });
      expect(html.text).toContain('<svg');
      expect(html.text).toContain('<strong>First divergence:</strong> <code>block.act</code>');

      // aten ops beside the modules, tensors of the chosen modules only: the GELU kernel itself
      // agrees (the stand-in perturbs the Python function around it), the module does not
      const ops = await runPrecision('odd', 'models/models.py:tiny', {
        ops: ['gelu'],
        mode: 'tensor',
        modules: ['block.*'],
        sessionId: run.sessionId,
      });
      const names = ops.view.modules.map((m) => m.module);
      const op = names.indexOf('block.act/aten::gelu');
      expect(op).toBeGreaterThan(0);
      expect(names[op - 1]).toBe('block.proj');
      expect(names[op + 1]).toBe('block.act');
      expect(ops.view.modules[op]).toMatchObject({ kind: 'op', result: 'pass', cosine: 1 });
      expect(ops.view.firstDivergence).toMatchObject({ module: 'block.act', result: 'error' });
      // x·(1 + 2^-10) keeps the cosine at 1: MaxAbsErr is what catches a scaled output
      expect(ops.view.modules[op + 1]!.maxAbsErr).toBeGreaterThan(0);
      expect(ops.view.modules[op]!.maxAbsErr).toBe(0);
      // only block.* kept its tensors: the embedding has statistics only
      expect(ops.view.modules.find((m) => m.module === 'embed')!.cosine).toBeNull();
      expect(ops.view.modules.find((m) => m.module === 'block.proj')!.cosine).toBeCloseTo(1, 12);
      expect(en(check(ops.run, 'precision.dump').summary)).toContain(
        'Aten ops recorded beside the modules: gelu.',
      );

      // the same model on a host without the perturbation, in the same session: the divergence is gone
      const fixed = await runPrecision('npu', 'models/models.py:tiny', {
        sessionId: run.sessionId,
      });
      const moved = await core.call('precision.compareRuns', {
        a: view.stageRunId,
        b: fixed.stageRunId,
      });
      expect(moved).toMatchObject({
        moved: 'gone',
        first: { a: { module: 'block.act' }, b: null },
      });
      expect(moved.changed.map((c) => [c.module, c.change])).toContainEqual(['block.act', 'fixed']);
      const cli = await amw(
        ['precision', 'compare', String(view.stageRunId), String(fixed.stageRunId), '--json'],
        { AMW_HOME: home },
      );
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      expect(JSON.parse(cli.stdout)).toMatchObject({
        a: view.stageRunId,
        b: fixed.stageRunId,
        moved: 'gone',
        summary: `Run ${fixed.stageRunId} against run ${view.stageRunId}: the divergence at block.act is gone; no module diverges.`,
      });
      const text = await amw(
        ['precision', 'compare', String(view.stageRunId), String(ops.stageRunId)],
        { AMW_HOME: home },
      );
      expect(text.stdout).toContain('the first divergence is still block.act');
      // result words in the reader's language; --json keeps the machine values
      const zhCompare = await amw(
        [
          '--lang',
          'zh-CN',
          'precision',
          'compare',
          String(view.stageRunId),
          String(fixed.stageRunId),
        ],
        { AMW_HOME: home },
      );
      expect(zhCompare.stdout).toMatch(/已修复\s+block\.act {2}错误 → 通过/);
      expect(zhCompare.stdout).not.toMatch(/\b(pass|error|fixed)\b/);
      expect(zh(check(run, 'precision.first-divergence').summary)).toContain(
        '首个偏差：block.act（错误）',
      );
      const zhReport = await core.call('reports.export', {
        source: { sessionId: run.sessionId },
        format: 'html',
        language: 'zh-CN',
      });
      expect(zhReport.text).toContain(
        '<code>block.act</code> <span class="pill s-fail">错误</span>',
      );
      expect(zhReport.text).not.toMatch(/class="pill s-\w+">(pass|warn|fail|error)</);

      // drill-down: the module's statistics on both sides, from the stored raw dumps
      const dumps = await core.call('precision.dumps', {
        stageRunId: view.stageRunId,
        module: 'block.act',
      });
      expect(dumps.baseline!.modules.map((r) => r.module)).toEqual(['block.act']);
      expect(dumps.target!.modules.map((r) => r.module)).toEqual(['block.act']);
      expect(dumps.target!.total).toBe(dumps.baseline!.total);
      const row = view.modules.find((m) => m.module === 'block.act')!;
      const [bOut, tOut] = [
        dumps.baseline!.modules[0]!.outputs[0]!,
        dumps.target!.modules[0]!.outputs[0]!,
      ];
      expect(bOut).toMatchObject({ max: row.baseline!.max, norm: row.baseline!.norm });
      expect(tOut).toMatchObject({ max: row.target!.max, norm: row.target!.norm });
      expect(tOut.norm).not.toBe(bOut.norm); // the perturbed GELU, seen on the target only
      const head = await core.call('precision.dumps', { stageRunId: view.stageRunId });
      expect(head.baseline!.modules.length).toBe(Math.min(200, head.baseline!.total));
      const shown = await amw(
        ['precision', 'show', String(view.stageRunId), '--module', 'block.act', '--json'],
        { AMW_HOME: home },
      );
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({
        module: 'block.act',
        compare: { result: 'error' },
        baseline: { modules: [{ module: 'block.act' }] },
        target: { modules: [{ module: 'block.act' }] },
      });
      const zhShown = await amw(
        ['--lang', 'zh-CN', 'precision', 'show', String(view.stageRunId), '--module', 'block.act'],
        { AMW_HOME: home },
      );
      expect(zhShown.stdout).toMatch(/^block\.act: 错误/);
      expect(zhShown.stdout).toMatch(/\n基线: cpu, torch /);
      expect(zhShown.stdout).toMatch(/\n目标: cpu, torch /);
      expect(zhShown.stdout).toContain(`max ${tOut.max!.toPrecision(4)}`);
      const zhList = await amw(['--lang', 'zh-CN', 'precision', 'show', String(view.stageRunId)], {
        AMW_HOME: home,
      });
      expect(zhList.stdout).toMatch(/\d 通过 +embed/);
      expect(zhList.stdout).toMatch(/\d 错误 +block\.act/);
      const none = await amw(
        ['precision', 'show', String(view.stageRunId), '--module', 'no.such'],
        { AMW_HOME: home },
      );
      expect(none.code).toBe(1);
      expect(none.stdout).toContain(`Run ${view.stageRunId} has no module no.such.`);
      // the report: with more than one run, how the first divergence moved over time
      const later = await core.call('reports.export', {
        source: { sessionId: run.sessionId },
        format: 'html',
        language: 'en',
      });
      // the stage's own words in the section (its namespace reaches the report's renderer)
      expect(later.text).toContain('<h2>Precision</h2>');
      expect(later.text).not.toContain('report.title');
      expect(later.text).toContain('Over time');
      expect(later.text).toContain(
        `Run ${fixed.stageRunId} against run ${ops.stageRunId}: the divergence at block.act is gone`,
      );
    } finally {
      await odd.stop();
    }
  }, 180_000);

  it('options of another mode are refused before a run exists, naming the option', async () => {
    const run = (extra: Record<string, unknown>) =>
      core.call('stages.run', { stage: 'precision', host: 'npu', baseline: 'cpu', ...extra });
    await expect(run({ entry: 'models/models.py:tiny', steps: 2 })).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: { issues: [{ path: 'steps', message: 'stage-precision:stepsNeedScript' }] },
    });
    await expect(
      run({ entry: 'models/models.py:tiny', modules: ['block.*'] }),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: { issues: [{ path: 'modules', message: 'stage-precision:modulesNeedTensor' }] },
    });
    await expect(
      run({ entry: 'models/models.py:tiny', script: 'models/train.py' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: { issues: [{ path: 'entry', message: 'stage-precision:needsEntry' }] },
    });
    await expect(run({ entry: 'models/models.py:tiny', ops: ['not an op'] })).rejects.toMatchObject(
      {
        code: 'VALIDATION',
      },
    );
  });

  it('amw run --stage precision --json prints the documented document; amw precision import reads msprobe output', async () => {
    const r = await amw(
      [
        'run',
        'npu',
        '--stage',
        'precision',
        '--baseline',
        'cpu',
        '--entry',
        'models/models.py:tiny',
        '--json',
      ],
      { AMW_HOME: home },
    );
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as Record<string, unknown> & {
      modules: Record<string, unknown>[];
    };
    expect(doc).toMatchObject({
      stage: 'precision',
      host: 'npu',
      baseline: 'cpu',
      status: 'pass',
      dtype: 'fp32',
      firstDivergence: null,
    });
    expect(Object.keys(doc.modules[0]!)).toEqual(
      expect.arrayContaining([
        'module',
        'order',
        'cosine',
        'maxAbsErr',
        'maxRelErr',
        'meanRelErr',
        'oneThousandthRatio',
        'fiveThousandthsRatio',
        'result',
      ]),
    );
    expect(r.code).toBe(0);
    const imp = await amw(
      ['precision', 'import', join(FIXTURES, 'compare_result_legacy'), '--json'],
      { AMW_HOME: home },
    );
    expect(imp.stderr).toBe('');
    const idoc = JSON.parse(imp.stdout) as {
      modules: number;
      counts: { pass: number };
      status: string;
    };
    expect(idoc).toMatchObject({ modules: 8, counts: { pass: 8 }, status: 'pass' });
    expect(imp.code).toBe(0);
    // msprobe's own format: an xlsx; NaN in it fails the overflow check, and the exit code says so
    const xlsx = await amw(
      ['precision', 'import', join(__dirname, '../fixtures/precision-xlsx'), '--json'],
      { AMW_HOME: home },
    );
    const xdoc = JSON.parse(xlsx.stdout) as {
      status: string;
      checks: { id: string; status: string }[];
      firstDivergence: { module: string };
    };
    expect(xdoc.firstDivergence.module).toBe('Functional.gelu.0.forward.output.0');
    expect(xdoc.checks.find((c) => c.id === 'precision.overflow')!.status).toBe('fail');
    expect(xlsx.code).toBe(1);
  }, 180_000);
});
