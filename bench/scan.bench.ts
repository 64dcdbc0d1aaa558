// Analyzer figures: a generated tree of ≥ 200k Python lines (half of the files free of CUDA, as
// in real projects), scanned once; prints lines per CPU-second, wall time and peak memory.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanProject } from '../electron/core/analyzer/scan';

const dir = mkdtempSync(join(tmpdir(), 'amw-bench-scan-'));
const CUDA_FILE = `import torch
import torch.distributed as dist
from torch.cuda.amp import autocast, GradScaler


def step(model, x, rank):
    torch.cuda.set_device(rank)
    model = model.cuda()
    dist.init_process_group(backend="nccl")
    with autocast():
        y = model(x.to("cuda:0"))
    torch.cuda.synchronize()
    return y
`;
const PLAIN_FILE = `import numpy as np


def normalise(values):
    total = float(np.sum(values))
    if total == 0:
        return values
    return [v / total for v in values]
`;
let lines = 0;
let files = 0;
for (let d = 0; lines < 200_000; d++) {
  mkdirSync(join(dir, `pkg${d}`));
  for (let f = 0; f < 50 && lines < 200_000; f++) {
    // a realistic file is a few hundred lines: repeat the body
    const body = (f % 2 ? PLAIN_FILE : CUDA_FILE).repeat(20);
    writeFileSync(join(dir, `pkg${d}`, `m${f}.py`), body);
    lines += body.split('\n').length;
    files++;
  }
}
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
let peak = process.memoryUsage().rss;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const scan = await scanProject(dir);
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
const wall = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(cpu0);
const cpuSec = (cpu.user + cpu.system) / 1e6;
console.log(`scan: ${files} files, ${scan.lines} lines, ${scan.findings.length} findings`);
console.log(
  `  ${(scan.lines / cpuSec).toFixed(0)} lines per CPU-second (${cpuSec.toFixed(2)} CPU-s), wall ${wall.toFixed(2)} s, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`,
);
rmSync(dir, { recursive: true, force: true });
