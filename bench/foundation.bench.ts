// Foundation figures: opening and migrating the store, a contract call over serve mode's
// WebSocket, and backup throughput.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { createCore } from '../electron/core/api/core';
import { openStore } from '../electron/core/db/open';
import { startServer } from '../electron/server/serve';
import { fillDatabase } from '../tests/support/fill';

const dir = mkdtempSync(join(tmpdir(), 'amw-bench-'));
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;

try {
  // 1. cold open + all migrations, then a warm reopen
  let t0 = process.hrtime.bigint();
  openStore(join(dir, 'cold.db')).db.close();
  const cold = ms(t0);
  t0 = process.hrtime.bigint();
  openStore(join(dir, 'cold.db')).db.close();
  console.log(`store open: new database ${cold.toFixed(1)} ms, existing ${ms(t0).toFixed(1)} ms`);

  // 2. WebSocket RPC round trip
  const home = join(dir, 'home');
  const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
  const renderer = join(dir, 'renderer');
  mkdirSync(renderer);
  writeFileSync(join(renderer, 'index.html'), '<!doctype html>');
  const server = await startServer(core, { rendererDir: renderer });
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${server.token}`);
  await new Promise((r) => ws.once('open', r));
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const start = process.hrtime.bigint();
    await new Promise<void>((resolve) => {
      ws.once('message', () => resolve());
      ws.send(JSON.stringify({ id: i, method: 'settings.get', input: {} }));
    });
    times.push(ms(start));
  }
  console.log(
    `rpc settings.get over WebSocket (2000 calls): p50 ${pct(times, 0.5).toFixed(3)} ms, p99 ${pct(times, 0.99).toFixed(3)} ms`,
  );
  ws.close();
  await server.close();

  // 3. backup throughput on a ~100 MiB store
  const { db } = openStore(join(home, 'amw.db'));
  fillDatabase(db, 100);
  db.close();
  const before = process.memoryUsage().rss;
  t0 = process.hrtime.bigint();
  const { jobId } = await core.call('maintenance.backup', {});
  const job = await core.jobs.wait(jobId);
  const took = ms(t0);
  const bytes = (job.result as { bytes: number }).bytes;
  console.log(
    `backup: ${(bytes / 2 ** 20).toFixed(0)} MiB in ${took.toFixed(0)} ms = ${(bytes / 2 ** 20 / (took / 1000)).toFixed(0)} MiB/s, rss +${((process.memoryUsage().rss - before) / 2 ** 20).toFixed(0)} MiB`,
  );
  await core.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
