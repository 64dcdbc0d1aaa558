// Step timeline figures: a trace_view.json whose ProfilerStep#1 holds 1M events (AMW_BENCH_EVENTS),
// imported into a session, then the profiling stage opened in Debian's Chromium through `amw
// serve`. Prints: the engine's profiling.timeline (two passes over the file, columns, base64) in
// wall and CPU time and its payload; time to first paint (the timeline mounted → the first frame
// of the canvas, the call, the transfer and the decoding included); and, while zooming in, panning
// and zooming out, each frame's draw time and the interval between animation frames.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../electron/core/reports/chromium';
import { createCore } from '../electron/core/api/core';
import { writeStepTrace } from './profiling-data';

const events = Number(process.env.AMW_BENCH_EVENTS ?? 1_000_000);
const home = mkdtempSync(join(tmpdir(), 'amw-bench-tl-'));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const figures = (label: string, xs: number[]) =>
  `${label}: median ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} frames)`;

try {
  const dir = join(home, 'profile', 'ASCEND_PROFILER_OUTPUT');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'trace_view.json');
  await writeStepTrace(file, events);
  console.log(
    `trace_view.json: ${(statSync(file).size / 1e6).toFixed(0)} MB, ProfilerStep#1 holds ${events} events`,
  );
  const core = createCore({ env: { ...process.env, AMW_HOME: home } });
  let sessionId: number;
  try {
    const started = await core.call('profiling.import', { dir: join(home, 'profile') });
    const job = await core.jobs.wait(started.jobId);
    if (job.status !== 'succeeded') throw new Error(`import ${job.status}`);
    sessionId = started.sessionId;
    const w0 = performance.now();
    const c0 = process.cpuUsage();
    const t = await core.call('profiling.timeline', { stageRunId: started.stageRunId });
    const c = process.cpuUsage(c0);
    const payload = JSON.stringify(t).length;
    console.log(
      `engine profiling.timeline: ${t.events} events on ${t.tracks.length} tracks, ${t.lanes.length} lanes, ${((performance.now() - w0) / 1000).toFixed(2)} s wall, ${((c.user + c.system) / 1e6).toFixed(2)} s CPU; ${(payload / 1e6).toFixed(1)} MB as JSON`,
    );
  } finally {
    await core.close();
  }

  const child = spawn(process.execPath, ['bin/amw.js', 'serve', '--port', '0'], {
    env: { ...process.env, AMW_HOME: home },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!.trim());
    });
  });
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${url}#/sessions/${sessionId}/profiling`);
    const canvas = page.locator('[data-testid=timeline-canvas][data-ready=true]');
    await canvas.waitFor({ timeout: 300_000 });
    const first = Number(await canvas.getAttribute('data-first-paint-ms'));
    console.log(`time to first paint: ${first} ms (timeline mounted → first frame on the canvas)`);
    // AMW_BENCH_SCREENSHOT=FILE.png: what the first frame looks like
    if (process.env.AMW_BENCH_SCREENSHOT) {
      await page.getByTestId('profiling-timeline').scrollIntoViewIfNeeded();
      await page
        .getByTestId('profiling-timeline')
        .screenshot({ path: process.env.AMW_BENCH_SCREENSHOT });
    }
    // each gesture in the page: one input event per animation frame, the frame's draw time read
    // from the canvas and the interval between frames measured by requestAnimationFrame
    const run = (kind: 'zoomIn' | 'pan' | 'zoomOut', n: number) =>
      page.evaluate(
        async ({ kind, n }) => {
          const c = document.querySelector<HTMLCanvasElement>('[data-testid=timeline-canvas]')!;
          const r = c.getBoundingClientRect();
          const draws: number[] = [];
          const frames: number[] = [];
          const next = () => new Promise<number>((res) => requestAnimationFrame(res));
          let last = await next();
          const x = r.left + 180 + (r.width - 180) * 0.37;
          const y = r.top + 60;
          if (kind === 'pan')
            c.dispatchEvent(new MouseEvent('mousedown', { clientX: x, clientY: y, bubbles: true }));
          for (let k = 0; k < n; k++) {
            if (kind === 'pan')
              c.dispatchEvent(
                new MouseEvent('mousemove', {
                  clientX: x + (k % 20 < 10 ? -1 : 1) * 25 * (k % 10),
                  clientY: y,
                  bubbles: true,
                }),
              );
            else
              c.dispatchEvent(
                new WheelEvent('wheel', {
                  deltaY: kind === 'zoomIn' ? -150 : 150,
                  clientX: x,
                  clientY: y,
                  bubbles: true,
                  cancelable: true,
                }),
              );
            const now = await next();
            frames.push(now - last);
            last = now;
            draws.push(Number(c.dataset.drawMs));
          }
          if (kind === 'pan')
            c.dispatchEvent(new MouseEvent('mouseup', { clientX: x, clientY: y, bubbles: true }));
          return { draws, frames, drawn: Number(c.dataset.drawn) };
        },
        { kind, n },
      );
    for (const [kind, n] of [
      ['zoomIn', 40],
      ['pan', 60],
      ['zoomOut', 40],
    ] as const) {
      const r = await run(kind, n);
      console.log(
        `  ${kind.padEnd(7)} ${figures('draw', r.draws)}; ${figures('frame interval', r.frames)}; last frame drew ${r.drawn} rectangles`,
      );
    }
  } finally {
    await browser.close();
    child.kill('SIGINT');
  }
  console.log(
    '(frame intervals are ≥ 16.7 ms by vsync; the machine is shared: figures under load)',
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
