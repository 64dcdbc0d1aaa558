// Measures the streaming-parser candidates for the profiling import on generated files: two
// CSV parsers (csv-parse, papaparse) and two JSON parsers (stream-json, @streamparser/json),
// each in its own process so peak RSS is its own. `node scripts/run-ts.mjs
// bench/profiling-candidates.ts [csvMB] [jsonMB]`. The figures decide electron/core/stages/
// profiling/csv-stream.ts and trace-view.ts (the chosen ones are noted there).
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKernelDetails, writeTraceView } from './profiling-data';

async function runCandidate(name: string, file: string): Promise<number> {
  let n = 0;
  if (name === 'csv-parse') {
    const { parse } = await import('csv-parse');
    const p = createReadStream(file).pipe(
      parse({ relax_column_count: true, relax_quotes: true, bom: true }),
    );
    for await (const row of p as AsyncIterable<string[]>) if (row.length) n++;
  } else if (name === 'papaparse') {
    const Papa = (await import('papaparse')).default;
    await new Promise<void>((resolve, reject) => {
      Papa.parse(
        createReadStream(file) as unknown as File,
        {
          step: () => void n++,
          complete: () => resolve(),
          error: reject,
        } as never,
      );
    });
  } else if (name === 'papaparse-chunk') {
    const Papa = (await import('papaparse')).default;
    await new Promise<void>((resolve, reject) => {
      Papa.parse(
        createReadStream(file) as unknown as File,
        {
          delimiter: ',',
          chunk: (r: { data: string[][] }) => void (n += r.data.length),
          complete: () => resolve(),
          error: reject,
        } as never,
      );
    });
  } else if (name === 'stream-json') {
    const { parser } = await import('stream-json');
    const { streamArray } = await import('stream-json/streamers/stream-array.js');
    const chain = (await import('stream-chain')).default;
    const pipeline = chain([createReadStream(file), parser(), streamArray()]);
    for await (const _ of pipeline as AsyncIterable<unknown>) n++;
  } else if (name === '@streamparser/json') {
    const { JSONParser } = await import('@streamparser/json');
    const p = new JSONParser({ paths: ['$.*'], keepStack: false });
    p.onValue = () => void n++;
    for await (const chunk of createReadStream(file)) p.write(chunk as Buffer);
  }
  return n;
}

if (process.argv[2] === '--child') {
  const [, , , name, file] = process.argv;
  const t0 = performance.now();
  const n = await runCandidate(name!, file!);
  const s = (performance.now() - t0) / 1000;
  const mb = statSync(file!).size / 1e6;
  console.log(
    `  ${name!.padEnd(20)} ${n} records, ${(mb / s).toFixed(1)} MB/s, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
} else {
  const csvMB = Number(process.argv[2] ?? 200);
  const jsonMB = Number(process.argv[3] ?? 100);
  const dir = mkdtempSync(join(tmpdir(), 'amw-cand-'));
  try {
    const csv = join(dir, 'kernel_details.csv');
    const json = join(dir, 'trace_view.json');
    await writeKernelDetails(csv, csvMB * 1e6);
    await writeTraceView(json, jsonMB * 1e6);
    const self = process.argv[1]!;
    console.log(`CSV candidates on ${csvMB} MB kernel_details.csv:`);
    for (const c of ['csv-parse', 'papaparse', 'papaparse-chunk'])
      spawnSync(process.execPath, [self, '--child', c, csv], { stdio: 'inherit' });
    console.log(`JSON candidates on ${jsonMB} MB trace_view.json:`);
    for (const c of ['stream-json', '@streamparser/json'])
      spawnSync(process.execPath, [self, '--child', c, json], { stdio: 'inherit' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
