// Doctor figures: a generated training log (default 1 GiB; AMW_BENCH_DOCTOR_MB to change) streamed
// through `diagnosePath`: wall time, throughput, peak RSS, matches. Then 64 MiB of binary noise and
// a file of 4 KiB near-miss lines (every line a prefilter hit that no rule takes).
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diagnosePath } from '../electron/core/doctor/diagnose';

const MB = Number(process.env.AMW_BENCH_DOCTOR_MB ?? 1024);
const dir = mkdtempSync(join(tmpdir(), 'amw-bench-doctor-'));

async function write(path: string, bytes: number, next: (i: number) => string | Buffer) {
  const out = createWriteStream(path);
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    const piece = next(i);
    written += piece.length;
    if (!out.write(piece)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise<void>((r) => out.end(r));
}

async function measure(label: string, path: string, bytes: number) {
  let peak = process.memoryUsage().rss;
  const base = peak;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  const r = await diagnosePath(path, 'en');
  const s = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(
    `${label}: ${(bytes / 2 ** 20).toFixed(0)} MiB, ${r.stats.lines} lines in ${s.toFixed(1)} s ` +
      `(${(bytes / 2 ** 20 / s).toFixed(0)} MiB/s), peak RSS +${((peak - base) / 2 ** 20).toFixed(0)} MiB, ` +
      `${r.matches.length} matches (${r.stats.suppressed.reduce((a, x) => a + x.count, 0)} over the per-rule cap), ` +
      `${r.unmatched.length} unknown error lines`,
  );
}

try {
  const step = (i: number) =>
    `[2026-05-01 10:${String(i % 60).padStart(2, '0')}:00] INFO rank${i % 8} step ${i} loss ${(2 + Math.sin(i)).toFixed(4)} lr 1.0e-4 tokens/s 12345 grad_norm 0.98\n`;
  const failures = [
    "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)\n",
    '[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck\n',
    'ValueError: something the doctor does not know\n',
  ];
  const log = join(dir, 'train.log');
  const bytes = MB * 2 ** 20;
  await write(log, bytes, (i) =>
    i % 50_000 === 49_999 ? failures[((i / 50_000) % 3) | 0]! : step(i),
  );
  await measure('training log', log, bytes);

  const bin = join(dir, 'core.log');
  const chunk = Buffer.alloc(2 ** 20);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 2654435761) >>> 24;
  await write(bin, 64 * 2 ** 20, () => chunk);
  await measure('binary noise', bin, 64 * 2 ** 20);

  const near = join(dir, 'near.log');
  const nearLine = `${'error '.repeat(10)}${'undefined symbo libhccl.s EE100 '.repeat(125)}\n`;
  await write(near, 64 * 2 ** 20, () => nearLine);
  await measure('near-miss lines', near, 64 * 2 ** 20);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
