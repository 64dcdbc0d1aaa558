// Chart library figures for the profiling view, in Debian's Chromium: the stage's biggest chart
// (stacked step breakdown bars for 128 ranks × 1000 steps = 128,000 bars of 3 parts) drawn by the
// current plain DOM bars, uPlot and ECharts (each its own minified bundle, its own page). Prints
// the bundle size, the first render (data in memory → the chart on screen), the redraw after
// each of 8 zooms, and the JS heap. The choice is written in docs/profiling-charts.md.
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../electron/core/reports/chromium';
import type { ChartPage } from './charts/data';

const CANDIDATES = ['dom', 'uplot', 'uplot-stepped', 'echarts', 'echarts-area'];
const dir = mkdtempSync(join(tmpdir(), 'amw-bench-charts-'));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
try {
  for (const c of CANDIDATES) {
    await build({
      entryPoints: [`bench/charts/${c}.ts`],
      outdir: join(dir, c),
      bundle: true,
      minify: true,
      format: 'iife',
      platform: 'browser',
      target: 'chrome120',
      logLevel: 'warning',
    });
    const files = readdirSync(join(dir, c));
    writeFileSync(
      join(dir, c, 'index.html'),
      `<!doctype html><meta charset="utf-8">${files
        .filter((f) => f.endsWith('.css'))
        .map((f) => `<link rel="stylesheet" href="${f}">`)
        .join('')}<div id="chart"></div><script src="${c}.js"></script>`,
    );
  }
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: [...CHROMIUM_ARGS, '--enable-precise-memory-info'],
  });
  try {
    console.log('stacked step bars, 128 ranks × 1000 steps (128,000 bars × 3 parts), 1200×400 px:');
    const rows: { c: string; bundle: string; first: string; zoom: string; heap: string }[] = [];
    for (const c of CANDIDATES) {
      const js = readFileSync(join(dir, c, `${c}.js`));
      const css = readdirSync(join(dir, c))
        .filter((f) => f.endsWith('.css'))
        .reduce((a, f) => a + statSync(join(dir, c, f)).size, 0);
      const page = await browser.newPage({ viewport: { width: 1300, height: 600 } });
      await page.goto(`file://${join(dir, c, 'index.html')}`);
      // the renderer's CPU time (Chromium's ProcessTime metric), which load does not stretch
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      const cpu = async () =>
        (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ProcessTime')!
          .value * 1000;
      const c0 = await cpu();
      const first = await page.evaluate(() => (window as unknown as ChartPage).__chart.first());
      const c1 = await cpu();
      const zooms = await page.evaluate(() => (window as unknown as ChartPage).__chart.zooms());
      const c2 = await cpu();
      const heapMB = await page.evaluate(() => (window as unknown as ChartPage).__chart.heap());
      await page.close();
      rows.push({
        c,
        bundle: `${((js.length + css) / 1024).toFixed(0)} KB / ${(gzipSync(js).length / 1024).toFixed(0)} KB`,
        first: `${first.toFixed(0)} ms (CPU ${(c1 - c0).toFixed(0)} ms)`,
        zoom: `${pct(zooms, 50).toFixed(0)} / ${Math.max(...zooms).toFixed(0)} ms (CPU ${((c2 - c1) / zooms.length).toFixed(0)} ms each)`,
        heap: `${heapMB?.toFixed(0) ?? '?'} MB`,
      });
    }
    // a Markdown table, as docs/profiling-charts.md keeps it
    console.log(
      '| candidate | bundle (min / gzip) | first render | redraw after a zoom (median / max) | JS heap |',
    );
    console.log('| --- | --- | --- | --- | --- |');
    for (const r of rows)
      console.log(`| ${r.c} | ${r.bundle} | ${r.first} | ${r.zoom} | ${r.heap} |`);
  } finally {
    await browser.close();
  }
  console.log('(the machine is shared: figures under load; the lead re-measures on an idle one)');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
