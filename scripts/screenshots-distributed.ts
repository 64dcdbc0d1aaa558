// Screenshots of the distributed (HCCL) stage from a real `amw serve` in Debian Chromium, as root:
// `node scripts/run-ts.mjs scripts/screenshots-distributed.ts` (after `node scripts/build.mjs`).
// Three simulated hosts in their own network namespaces (real sshd, the stub hccn_tool — a test
// double — and Debian's CPU PyTorch); one has NPU 3's link DOWN and its TLS switch on. Session
// "rack B bring-up" holds a run whose torchrun gloo all_reduce passed (bandwidth chart), "rack B,
// rendezvous port blocked" one whose launch failed (the rendezvous port dropped by nft on the first host).
// Writes docs/screens/distributed-{en,zh-CN}.png and the failed launch's logs into test-results/.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { netnsFleetSupported, startNetnsFleet } from '../e2e/hosts/netns';
import { CHROMIUM_ARGS, chromiumPath } from '../e2e/support/chromium';
import { createCore } from '../electron/core/api/core';
import { setHccnConfig } from '../tests/support/hccn-tool';

const support = netnsFleetSupported();
if (!support.ok) {
  console.log(`distributed screenshots skipped: ${support.reason}`);
  process.exit(0);
}
const EIGHT = [0, 1, 2, 3, 4, 5, 6, 7];
const each = <T>(f: (d: number) => T) => Object.fromEntries(EIGHT.map((d) => [String(d), f(d)]));
const home = mkdtempSync(join(tmpdir(), 'amw-shots-dist-'));
const fleet = await startNetnsFleet(3, { prefix: 'rackb', profile: 'hccn-ok' });
fleet.hosts.forEach((h, i) =>
  setHccnConfig(h.sim, {
    ip: each((d) => `192.${60 + i}.${d}.10`),
    netdetect: each((d) => `192.${60 + i}.${d}.1`),
    ...(i === 1 ? { link: { '3': 'DOWN' }, tls: each(() => 1 as const) } : {}),
  }),
);
const names = fleet.hosts.map((h) => h.name);
let child: ReturnType<typeof spawn> | null = null;
try {
  const core = createCore({
    env: { AMW_HOME: home } as NodeJS.ProcessEnv,
    hostKeyPolicy: 'accept-new',
    userKnownHosts: [],
  });
  for (const h of fleet.hosts)
    await core.call('hosts.add', {
      name: h.name,
      hostname: h.address,
      port: h.sim.port,
      username: h.sim.user,
      identityFile: h.sim.clientKey,
      group: 'rack-b',
    });
  const runIn = async (title: string) => {
    const session = await core.call('sessions.create', { title, hosts: names });
    const started = await core.call('stages.run', {
      stage: 'distributed',
      sessionId: session.id,
      hosts: names,
      collectiveDeadlineS: 90,
    } as never);
    await core.jobs.wait(started.jobId);
  };
  fleet.blockPorts(fleet.hosts[0]!, 29400, 29410, 'drop');
  await runIn('rack B, rendezvous port blocked');
  fleet.heal(fleet.hosts[0]!);
  await runIn('rack B bring-up');
  await core.close();

  child = spawn(process.execPath, ['bin/amw.js', 'serve', '--port', '0'], {
    env: { ...process.env, AMW_HOME: home },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve) => {
    let buf = '';
    child!.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!.trim());
    });
  });
  mkdirSync('docs/screens', { recursive: true });
  mkdirSync('test-results', { recursive: true });
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await page.goto(url);
    await page.locator('#root[data-app-state="ready"]').waitFor({ state: 'attached' });
    const open = async (title: string) => {
      await page.getByTestId('nav-sessions').click();
      await page
        .getByTestId('sessions-table')
        .locator('tr.clickable', { hasText: title })
        .first()
        .click();
      await page.getByTestId('stage-distributed').click();
      await page.getByTestId('distributed-collective').waitFor();
    };
    const shoot = async (lang: 'en' | 'zh-CN', path: string) => {
      await page.getByTestId(`lang-${lang}`).click();
      await page.waitForTimeout(300);
      await page.screenshot({ path, fullPage: true });
    };
    await open('rack B bring-up');
    await page.getByTestId('dist-cell-rackb1-dist.link').click();
    await page.getByTestId('dist-evidence').waitFor();
    for (const lang of ['en', 'zh-CN'] as const)
      await shoot(lang, `docs/screens/distributed-${lang}.png`);
    await open('rack B, rendezvous port blocked');
    // the log of the host that failed first is open by itself
    await page.getByTestId('distributed-logs').locator('details[open]').first().waitFor();
    for (const lang of ['en', 'zh-CN'] as const)
      await shoot(lang, `test-results/distributed-failed-${lang}.png`);
  } finally {
    await browser.close();
  }
} finally {
  child?.kill('SIGINT');
  await fleet.destroy();
  rmSync(home, { recursive: true, force: true });
}
