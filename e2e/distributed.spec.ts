import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';
import { netnsFleetSupported, startNetnsFleet, type NetnsFleet } from './hosts/netns';
import { setHccnConfig } from '../tests/support/hccn-tool';
import { execFileSync } from 'node:child_process';

const support = simHostsSupported();

// Two simulated hosts with a stub hccn_tool (a test double): one is healthy, the other has NPU 3's
// link DOWN and its TLS switch on where the first has it off.
test.describe('distributed (HCCL) stage', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  const sims: SimHost[] = [];
  test.beforeAll(async () => {
    sims.push(
      await startSimHost('e2e-dist-a', 'hccn-ok'),
      await startSimHost('e2e-dist-b', 'hccn-faults'),
    );
  });
  test.afterAll(async () => {
    await Promise.all(sims.map((s) => s.stop()));
  });

  test('check a fleet: the matrix, a cell’s evidence, the link grid and what disagrees', async ({
    app,
  }) => {
    test.setTimeout(120_000);
    const { page } = app;
    const shell = new Shell(page);
    await shell.ready();
    for (const [name, sim] of [
      ['npu-a', sims[0]!],
      ['npu-b', sims[1]!],
    ] as const) {
      await page.getByTestId('nav-hosts').click();
      await page.getByTestId('open-add-host').click();
      const d = page.getByTestId('add-host-dialog');
      await d.getByTestId('host-name').fill(name);
      await d.getByTestId('host-hostname').fill(sim.host);
      await d.getByTestId('host-port').fill(String(sim.port));
      await d.getByTestId('host-username').fill(sim.user);
      await d.getByTestId('host-identityFile').fill(sim.clientKey);
      await d.getByTestId('host-save').click();
      await expect(page.getByTestId('host-title')).toHaveText(name);
    }
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-npu-a').check();
    await page.getByTestId('pick-host-npu-b').check();
    await page.getByTestId('session-title').fill('fleet');
    await page.getByTestId('session-create').click();
    await page.getByTestId('stage-distributed').click();
    const stage = page.getByTestId('distributed-stage');
    await expect(stage.getByTestId('dist-pick-npu-a')).toBeChecked();
    await stage.getByTestId('dist-collective').uncheck();
    await stage.getByTestId('run-stage').click();
    // first contact with each host: confirm its key (the probes run side by side)
    for (let i = 0; i < 2; i++) {
      const hk = page.getByTestId('hostkey-dialog');
      await expect(hk).toBeVisible({ timeout: 30_000 });
      await hk.getByTestId('hostkey-accept').click();
    }
    const link = stage.getByTestId('dist-cell-npu-b-dist.link');
    await expect(link).toHaveAttribute('data-status', 'fail', { timeout: 60_000 });
    await expect(stage.getByTestId('dist-cell-npu-a-dist.link')).toHaveAttribute(
      'data-status',
      'pass',
    );
    await link.click();
    const evidence = stage.getByTestId('dist-evidence');
    await expect(evidence).toContainText('NPU 3: link DOWN.');
    await expect(evidence).toContainText('hccn_tool -i 3 -link_stat -g');
    await expect(stage.getByTestId('dist-device-npu-b-3')).toHaveAttribute('data-status', 'fail');
    await expect(stage.getByTestId('dist-device-npu-a-3')).toHaveAttribute('data-status', 'pass');
    const tls = stage.getByTestId('dist-disagree-tls');
    await expect(tls).toContainText('0');
    await expect(tls).toContainText('1');
    await expect(stage.getByTestId('dist-outcome-dist.rank-table')).toContainText(
      'one was generated from the inventories (2 servers, 16 ranks',
    );
    // the link failure waived from its evidence: the cell stops counting it, and says so
    await evidence.getByTestId('waive').first().click();
    const dialog = page.getByTestId('waive-dialog');
    await dialog.getByTestId('waive-reason').fill('NPU 3 is being replaced; the job uses 0–2');
    await dialog.getByTestId('waive-by').fill('Wang Fang');
    await dialog.getByTestId('waive-save').click();
    await expect(evidence.getByTestId('waiver')).toContainText('Wang Fang');
    await expect(link).toHaveAttribute('data-waived', 'true');
    await expect(link).toHaveAttribute('title', /\(1 waived\)$/);
    await expect(link).not.toHaveAttribute('data-status', 'fail');
    await shell.language('zh-CN');
    await expect(evidence).toContainText('NPU 3：链路 DOWN。');
    await expect(stage.getByTestId('distributed-disagree')).toContainText('不一致的取值');
  });
});

function collectiveSkip(): string | null {
  const fleet = netnsFleetSupported();
  if (!fleet.ok) return fleet.reason;
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import torch.distributed'], { stdio: 'ignore' });
  } catch {
    return 'no PyTorch in /usr/bin/python3 (Debian python3-torch)';
  }
  return null;
}

// Three simulated hosts in their own network namespaces (real sshd, the stub hccn_tool — a test
// double — and Debian's CPU PyTorch): a real torchrun gloo all_reduce, then the same with the
// rendezvous port dropped by nft on the first host.
test.describe('distributed (HCCL) stage: the collective', () => {
  const skip = collectiveSkip();
  test.skip(skip !== null, skip ?? '');
  let fleet: NetnsFleet;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    fleet = await startNetnsFleet(3, { prefix: 'ui', profile: 'hccn-ok' });
    fleet.hosts.forEach((h, i) =>
      setHccnConfig(h.sim, {
        ip: Object.fromEntries(
          [0, 1, 2, 3, 4, 5, 6, 7].map((d) => [String(d), `192.${70 + i}.${d}.10`]),
        ),
      }),
    );
  });
  test.afterAll(async () => {
    await fleet?.destroy();
  });

  test('bandwidth chart of a good run, then a failed launch’s logs, in both languages', async ({
    app,
  }) => {
    test.setTimeout(420_000);
    const { page } = app;
    const shell = new Shell(page);
    await shell.ready();
    for (const h of fleet.hosts) {
      await page.getByTestId('nav-hosts').click();
      await page.getByTestId('open-add-host').click();
      const d = page.getByTestId('add-host-dialog');
      await d.getByTestId('host-name').fill(h.name);
      await d.getByTestId('host-hostname').fill(h.address);
      await d.getByTestId('host-port').fill(String(h.sim.port));
      await d.getByTestId('host-username').fill(h.sim.user);
      await d.getByTestId('host-identityFile').fill(h.sim.clientKey);
      await d.getByTestId('host-save').click();
      await expect(page.getByTestId('host-title')).toHaveText(h.name);
    }
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    for (const h of fleet.hosts) await page.getByTestId(`pick-host-${h.name}`).check();
    await page.getByTestId('session-title').fill('collective');
    await page.getByTestId('session-create').click();
    await page.getByTestId('stage-distributed').click();
    const stage = page.getByTestId('distributed-stage');
    await expect(stage.getByTestId('dist-collective')).toBeChecked();
    await stage.getByTestId('run-stage').click();
    for (let i = 0; i < fleet.hosts.length; i++) {
      const hk = page.getByTestId('hostkey-dialog');
      await expect(hk).toBeVisible({ timeout: 60_000 });
      await hk.getByTestId('hostkey-accept').click();
    }
    const chart = stage.getByTestId('distributed-bandwidth');
    await expect(chart).toBeVisible({ timeout: 240_000 });
    await expect(chart).toContainText('16 MiB');
    await expect(chart).toContainText('Bus bandwidth by message size');
    await expect(stage.getByTestId('distributed-collective')).toContainText(
      'torchrun · gloo · 3 ranks',
    );
    await expect(stage.getByTestId('dist-outcome-dist.collective')).toContainText(
      'No NPU with torch_npu on every host',
    );
    await shell.language('zh-CN');
    await expect(chart).toContainText('各消息大小下的总线带宽');
    await expect(stage.getByTestId('distributed-collective')).toContainText('3 个 rank');

    // the same fleet with the rendezvous port dropped on the first host: a failed launch
    fleet.blockPorts(fleet.hosts[0]!, 29400, 29410, 'drop');
    try {
      // a 90 s deadline: the rendezvous gives up after 30 s and the cause is named
      await stage.getByTestId('dist-deadline').fill('90');
      await stage.getByTestId('run-stage').click();
      const logs = stage.getByTestId('distributed-logs');
      await expect(logs).toBeVisible({ timeout: 180_000 });
      await expect(logs).toContainText('启动日志');
      // the host that failed first comes first, its log open
      const first = logs.locator('details').first();
      await expect(first).toHaveAttribute('open', '');
      await expect(first.locator('pre')).toContainText('Rendezvous');
      await expect(stage.getByTestId('dist-outcome-dist.collective')).toContainText('可能原因');
      await shell.language('en');
      await expect(logs).toContainText('Logs of the launch');
      await expect(stage.getByTestId('dist-outcome-dist.collective')).toContainText(
        'Likely cause:',
      );
    } finally {
      fleet.heal(fleet.hosts[0]!);
    }
  });
});
