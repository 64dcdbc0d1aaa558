// Analyzer figures: a generated tree of ≥ 200k Python lines (half of the files free of CUDA, as
// in real projects), scanned once; prints lines per CPU-second, wall time and peak memory.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanProject, type ScanResult } from '../electron/core/analyzer/scan';

const dir = mkdtempSync(join(tmpdir(), 'amw-bench-scan-'));
// A CUDA-bearing module as real projects have them: model code with a few device, AMP and
// distributed lines (about one finding per 15 lines, as in nanoGPT's train.py).
const CUDA_HEAD = `import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.cuda.amp import autocast, GradScaler
`;
const CUDA_BODY = `

class Block{{n}}(nn.Module):
    """A pre-norm transformer block."""

    def __init__(self, dim, heads, dropout=0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.scale = 1.0 / math.sqrt(dim // heads)

    def forward(self, x, mask=None):
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        x = x + self.mlp(self.norm2(x))
        return x


def train_step{{n}}(model, batch, optimizer, scaler, rank):
    # one optimisation step with mixed precision
    x, y = batch
    x = x.to("cuda:0", non_blocking=True)
    y = y.cuda()
    with autocast():
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if dist.is_initialized():
        dist.all_reduce(loss)
    return loss.item()
`;
const CUDA_FILE =
  CUDA_HEAD +
  Array.from({ length: 6 }, (_, n) => CUDA_BODY.replaceAll('{{n}}', String(n))).join('');
const PLAIN_FILE = `import numpy as np


def normalise(values):
    total = float(np.sum(values))
    if total == 0:
        return values
    return [v / total for v in values]
`.repeat(30);
let lines = 0;
let files = 0;
for (let d = 0; lines < 200_000; d++) {
  mkdirSync(join(dir, `pkg${d}`));
  for (let f = 0; f < 50 && lines < 200_000; f++) {
    const body = f % 2 ? PLAIN_FILE : CUDA_FILE;
    writeFileSync(join(dir, `pkg${d}`, `m${f}.py`), body);
    lines += body.split('\n').length;
    files++;
  }
}
interface Figure {
  rate: number;
  cpu: number;
  wall: number;
  peak: number;
}
async function once(workerThreshold: number): Promise<Figure & { scan: ScanResult }> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const scan = await scanProject(dir, { workerThreshold });
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / 1e6;
  return { rate: scan.lines / cpu, cpu, wall, peak, scan };
}
const line = (label: string, f: Figure, extra = '') =>
  console.log(
    `  ${label}: ${f.rate.toFixed(0)} lines per CPU-second (${f.cpu.toFixed(2)} CPU-s), wall ${f.wall.toFixed(2)} s, peak RSS ${(f.peak / 2 ** 20).toFixed(0)} MiB${extra}`,
  );
/** Warm figures vary with what else the machine runs: the median of several scans, and the range. */
async function warm(label: string, workerThreshold: number, runs = 7) {
  const all: Figure[] = [];
  for (let i = 0; i < runs; i++) all.push(await once(workerThreshold));
  all.sort((a, b) => a.rate - b.rate);
  const mid = all[all.length >> 1]!;
  line(
    label,
    { ...mid, peak: Math.max(...all.map((f) => f.peak)) },
    ` (median of ${runs}; ${all[0]!.rate.toFixed(0)}–${all.at(-1)!.rate.toFixed(0)})`,
  );
}
// cold: what one `amw scan` pays, including compiling the parser's WebAssembly and warming the
// JIT (a fixed start-up cost, here over 200k lines); warm: later scans in the same engine (the
// desktop app and serve mode keep it loaded); workers: the tree split over worker threads
const first = await once(Infinity);
line('one thread, cold (CLI)', first);
await warm('one thread, warm (app) ', Infinity);
const n = Math.min(availableParallelism(), 4);
line(`${n} workers, cold        `, await once(1));
await warm(`${n} workers, warm (app)  `, 1);
const scan = first.scan;
console.log(
  `scan: ${files} files, ${scan.lines} lines, ${scan.findings.length} findings (${((1000 * scan.findings.length) / scan.lines).toFixed(0)} per 1000 lines)`,
);
rmSync(dir, { recursive: true, force: true });
