// Precision figures: the engine's module-by-module compare (statistics and tensor mode) over
// 10,000 modules, tensor mode streaming two real tensor files from disk (peak RSS beside it),
// storing the result, and, where a python3 with torch exists here, what the dump harness's
// statistics hooks (and aten op hooks) add to a forward pass. Wall and CPU time both: the CPU
// time is the figure to trust on a loaded machine.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawModuleRecord, TensorStats } from '../shared/stages/precision/api';
import { compareDumps } from '../electron/core/stages/precision/compare';
import { openTensorFiles } from '../electron/core/stages/precision/tensor-files';
import { PrecisionRepository } from '../electron/core/stages/precision/repository';
import { ArtifactStore } from '../electron/core/db/artifacts';
import { openStore } from '../electron/core/db/open';

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const cpuMs = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const N = 10_000;
const ELEMENTS = 4096;

function side(noise: number): RawModuleRecord[] {
  return Array.from({ length: N }, (_, i) => {
    const s: TensorStats = {
      dtype: 'float32',
      shape: [8, 512],
      max: 3 + (i % 7) + noise,
      min: -3 - (i % 5),
      mean: 0.01 * (i % 11) + noise,
      norm: 40 + (i % 13),
      nan: 0,
      inf: 0,
      numel: ELEMENTS,
      data: { offset: i * ELEMENTS * 4, count: ELEMENTS },
    };
    return {
      module: `layers.${i >> 4}.sub.${i & 15}`,
      call: 0,
      cls: 'Linear',
      order: i,
      classSource: 'model.py:10',
      callSite: `model.py:${i}`,
      outputs: [s],
      kind: 'forward',
    };
  });
}

const base = side(0);
const tgt = side(1e-7);
let t0 = process.hrtime.bigint();
let c0 = process.cpuUsage();
const stats = compareDumps(base, tgt, { dtype: 'fp32', mode: 'statistics' });
console.log(
  `compare, statistics mode: ${N} modules in ${ms(t0).toFixed(1)} ms wall, ${cpuMs(c0).toFixed(1)} ms CPU (${stats.counts.pass} pass)`,
);

const a = new Float32Array(ELEMENTS).map((_, i) => Math.sin(i));
const b = a.map((x) => x * (1 + 1e-6));
t0 = process.hrtime.bigint();
c0 = process.cpuUsage();
const tens = compareDumps(base, tgt, {
  dtype: 'fp32',
  mode: 'tensor',
  read: (s) => (s === 'baseline' ? a : b),
});
console.log(
  `compare, tensor mode (in memory): ${N} modules × ${ELEMENTS} elements in ${ms(t0).toFixed(1)} ms wall, ${cpuMs(c0).toFixed(1)} ms CPU (first divergence ${tens.firstDivergence?.module ?? 'none'})`,
);

const dir = mkdtempSync(join(tmpdir(), 'amw-bench-precision-'));
try {
  // tensor mode as a run does it: two tensor files on disk (N × ELEMENTS float32 each, 160 MB),
  // read output by output; the heap must not grow by the files' size
  const files = { baseline: join(dir, 'baseline.bin'), target: join(dir, 'target.bin') };
  for (const [side, scale] of [
    ['baseline', 1],
    ['target', 1 + 1e-6],
  ] as const) {
    const fd = openSync(files[side], 'w');
    const chunk = Buffer.from(a.map((x) => x * scale).buffer);
    for (let i = 0; i < N; i++) writeSync(fd, chunk);
    closeSync(fd);
  }
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const reader = openTensorFiles(files);
  const sampled: typeof reader = Object.assign(
    ((s, d) => {
      const x = reader(s, d);
      peak = Math.max(peak, process.memoryUsage.rss());
      return x;
    }) as typeof reader,
    { close: reader.close },
  );
  t0 = process.hrtime.bigint();
  c0 = process.cpuUsage();
  const streamed = compareDumps(base, tgt, { dtype: 'fp32', mode: 'tensor', read: sampled });
  reader.close();
  console.log(
    `compare, tensor mode streamed from disk: ${N} modules × ${ELEMENTS} elements (2 × ${((N * ELEMENTS * 4) / 2 ** 20).toFixed(0)} MiB files) in ${ms(t0).toFixed(1)} ms wall, ${cpuMs(c0).toFixed(1)} ms CPU; RSS grew by at most ${((peak - rss0) / 2 ** 20).toFixed(1)} MiB (${streamed.counts.pass} pass, ${streamed.counts.warning} warning, ${streamed.counts.error} error)`,
  );
  const { db } = openStore(join(dir, 'amw.db'));
  const artifacts = new ArtifactStore(db, join(dir, 'artifacts'));
  db.prepare("INSERT INTO sessions (id, title, created_at) VALUES (1, 'b', 'x')").run();
  db.prepare(
    "INSERT INTO stage_runs (id, session_id, stage, status, started_at) VALUES (1, 1, 'precision', 'running', 'x')",
  ).run();
  t0 = process.hrtime.bigint();
  new PrecisionRepository(db, artifacts).save(
    1,
    {
      source: 'run',
      baseline: 'b',
      entry: 'e',
      backward: false,
      inputsSha256: null,
      baselineSnapshotId: null,
      targetSnapshotId: null,
      dumps: null,
      problems: [],
    },
    tens,
  );
  const saved = ms(t0);
  t0 = process.hrtime.bigint();
  const view = new PrecisionRepository(db, artifacts).get(1, 'h');
  console.log(
    `store: ${N} module rows saved in ${saved.toFixed(1)} ms, read back in ${ms(t0).toFixed(1)} ms (${view.modules.length})`,
  );
  db.close();

  // the harness's statistics hooks against a plain forward pass (torch on this machine only)
  const py = ['/usr/bin/python3', 'python3'].find((p) => {
    try {
      execFileSync(p, ['-c', 'import torch'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (py && existsSync('resources/probes/precision_dump.py')) {
    const model = join(dir, 'deep.py');
    writeFileSync(
      model,
      [
        'import torch',
        'from torch import nn',
        'def deep():',
        '    layers = [m for _ in range(100) for m in (nn.Linear(256, 256), nn.GELU())]',
        '    return nn.Sequential(*layers), [(torch.randn(64, 256),) for _ in range(10)]',
        '',
      ].join('\n'),
    );
    const plain = [
      'import sys, time, torch',
      `sys.path.insert(0, ${JSON.stringify(dir)})`,
      'from deep import deep',
      'torch.manual_seed(1); m, bs = deep(); m.eval()',
      't = time.time(); c = time.process_time()',
      '[m(*b) for b in bs]',
      'print(time.time() - t, time.process_time() - c)',
    ].join('\n');
    const [plainS, plainCpu] = execFileSync(py, ['-c', plain], { encoding: 'utf8' })
      .trim()
      .split(' ')
      .map(Number) as [number, number];
    const harness = (extra: Record<string, unknown>) => {
      const out = execFileSync(py, ['resources/probes/precision_dump.py'], {
        encoding: 'utf8',
        maxBuffer: 64 * 2 ** 20,
        env: {
          ...process.env,
          HOME: dir,
          AMW_PRECISION_ARGS: JSON.stringify({
            entry: `${model}:deep`,
            role: 'baseline',
            workdir: 'w',
            ...extra,
          }),
        },
      });
      return JSON.parse(
        out
          .slice(out.lastIndexOf('@@AMW-PRECISION@@') + '@@AMW-PRECISION@@'.length)
          .split('\n')[0]!,
      ) as { forwardSeconds: number; forwardCpuSeconds: number; modules: unknown[] };
    };
    const doc = harness({});
    console.log(
      `harness, statistics mode: 10 batches × 201 modules, forward ${(plainS * 1000).toFixed(0)} ms wall / ${(plainCpu * 1000).toFixed(0)} ms CPU plain, ${(doc.forwardSeconds * 1000).toFixed(0)} ms wall / ${(doc.forwardCpuSeconds * 1000).toFixed(0)} ms CPU hooked (${(doc.forwardCpuSeconds / plainCpu).toFixed(2)}× CPU), ${doc.modules.length} module records`,
    );
    const withOps = harness({ ops: ['addmm', 'gelu'] });
    console.log(
      `harness, statistics mode + --ops addmm,gelu: forward ${(withOps.forwardSeconds * 1000).toFixed(0)} ms wall / ${(withOps.forwardCpuSeconds * 1000).toFixed(0)} ms CPU hooked (${(withOps.forwardCpuSeconds / plainCpu).toFixed(2)}× CPU), ${withOps.modules.length} records`,
    );
  } else console.log('harness: no python3 with torch here, not measured');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
