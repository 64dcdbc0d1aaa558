import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';

// A name that would run script if it were markup: the tooltip must show it as text.
const HOSTILE = '<img src=x onerror="window.__pwned=1">';

function trace(): string {
  const x = (name: string, tid: number, ts: number, dur: number) =>
    ({ ph: 'X', name, pid: 1, tid, ts: `${1_000_000 + ts}.000`, dur, cat: 'cpu_op' }) as const;
  return JSON.stringify([
    { ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: 'Python' } },
    x('ProfilerStep#1', 7, 0, 1000),
    x(HOSTILE, 7, 100, 800),
    x('ProfilerStep#2', 7, 2000, 500),
    x('aten::add', 7, 2100, 100),
  ]);
}

test('the step timeline: tracks, a tooltip that shows host text as text, steps, zh-CN', async ({
  app,
}) => {
  const { page, home } = app;
  const dir = mkdtempSync(join(tmpdir(), 'amw-e2e-tl-'));
  try {
    mkdirSync(join(dir, 'ASCEND_PROFILER_OUTPUT'));
    writeFileSync(join(dir, 'ASCEND_PROFILER_OUTPUT', 'trace_view.json'), trace());
    // the CLI and the app share the data directory: import with the CLI, look in the app
    const r = spawnSync(process.execPath, ['bin/amw.js', 'profile', 'import', dir, '--store'], {
      env: { ...process.env, AMW_HOME: home },
      encoding: 'utf8',
    });
    const m = /session (\d+), run \d+/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    const session = Number(m![1]);
    await new Shell(page).ready();
    await page.evaluate(
      (id) =>
        ((globalThis as unknown as { location: { hash: string } }).location.hash =
          `#/sessions/${id}/profiling`),
      session,
    );
    const canvas = page.locator('[data-testid=timeline-canvas][data-ready=true]');
    await expect(canvas).toBeVisible({ timeout: 30_000 });
    const tl = page.getByTestId('profiling-timeline');
    await expect(tl).toContainText('2 events on 1 track(s)');

    // the hostile event: lane 2 (depth 1), the middle of the step (the run and import forms sit
    // above the profile, so the canvas is brought into the viewport before pointing at it)
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + 180 + (box.width - 180) * 0.5, box.y + 22 + 16 + 8);
    const tip = page.getByTestId('timeline-tooltip');
    await expect(tip).toContainText(HOSTILE);
    await expect(tip.locator('img')).toHaveCount(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBe(
      undefined,
    );
    await expect(tip).toContainText('800 µs');

    await page.getByTestId('timeline-step').selectOption('2');
    await expect(tl).toContainText('2 events on 1 track(s) over 500 µs');

    await new Shell(page).language('zh-CN');
    await expect(tl).toContainText('单步时间线');
    await expect(tl).toContainText('滚轮：缩放');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
