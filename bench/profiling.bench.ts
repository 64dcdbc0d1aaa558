// Profiling import: a generated kernel_details.csv and trace_view.json, each imported in its own
// process (so peak RSS is the import's), through the same importProfile() as `amw profile import`.
// Sizes: the 2 GB csv and 1 GB trace by default; AMW_BENCH_CSV_MB / AMW_BENCH_TRACE_MB
// for smaller runs. Goal: ≥ 100 MB/s, peak RSS ≤ 300 MB. MB/s is printed over wall time and over
// the process's CPU time (user+sys: what a loaded, shared machine does not distort).
// AMW_BENCH_REFERENCE=1 also imports each file with the maintained parsers alone (papaparse,
// @streamparser/json), the path the fast scanners fall back to.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importProfile } from '../electron/core/stages/profiling/import';
import { writeKernelDetails, writeTraceView } from './profiling-data';

if (process.argv[2] === '--child') {
  const dir = process.argv[3]!;
  const parser = process.argv[4] === 'reference' ? 'reference' : 'fast';
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await importProfile(dir, { parser });
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  const mb = r.bytes / 1e6;
  const what = r.kernels
    ? `${r.kernels.count} kernels, ${Object.keys(r.kernels.byTaskType).length} task types`
    : `${r.timeline?.events ?? 0} events, ${r.timeline?.opCompile.count ?? 0} aclopCompileAndExecute`;
  const rss = process.resourceUsage().maxRSS / 1024;
  console.log(
    `  ${parser.padEnd(9)} ${mb.toFixed(0)} MB in ${s.toFixed(1)} s = ${(mb / s).toFixed(1)} MB/s wall, ${(mb / cpu).toFixed(1)} MB/s of CPU time (${cpu.toFixed(1)} s user+sys) (goal ≥ 100), peak RSS ${rss.toFixed(0)} MB (goal ≤ 300); ${what}; warnings: ${[...new Set(r.warnings.map((w) => w.message.key.replace('stage-profiling:', '')))].join(', ') || 'none'}`,
  );
} else {
  const csvMB = Number(process.env.AMW_BENCH_CSV_MB ?? 2000);
  const traceMB = Number(process.env.AMW_BENCH_TRACE_MB ?? 1000);
  const parsers = process.env.AMW_BENCH_REFERENCE === '1' ? ['fast', 'reference'] : ['fast'];
  const root = mkdtempSync(join(tmpdir(), 'amw-bench-prof-'));
  try {
    const csvDir = join(root, 'csv', 'ASCEND_PROFILER_OUTPUT');
    const traceDir = join(root, 'trace', 'ASCEND_PROFILER_OUTPUT');
    mkdirSync(csvDir, { recursive: true });
    mkdirSync(traceDir, { recursive: true });
    let t0 = performance.now();
    const k = await writeKernelDetails(join(csvDir, 'kernel_details.csv'), csvMB * 1e6);
    console.log(
      `generated kernel_details.csv: ${(statSync(join(csvDir, 'kernel_details.csv')).size / 1e6).toFixed(0)} MB, ${k.rows} rows (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
    const self = process.argv[1]!;
    console.log('import kernel_details.csv:');
    for (const p of parsers)
      spawnSync(process.execPath, [self, '--child', join(root, 'csv'), p], { stdio: 'inherit' });
    rmSync(join(root, 'csv'), { recursive: true, force: true }); // /tmp holds one at a time
    t0 = performance.now();
    const t = await writeTraceView(join(traceDir, 'trace_view.json'), traceMB * 1e6);
    console.log(
      `generated trace_view.json: ${(statSync(join(traceDir, 'trace_view.json')).size / 1e6).toFixed(0)} MB, ${t.rows} events (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
    console.log('import trace_view.json:');
    for (const p of parsers)
      spawnSync(process.execPath, [self, '--child', join(root, 'trace'), p], { stdio: 'inherit' });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
