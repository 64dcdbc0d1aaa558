import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import { netnsFleetSupported, startNetnsFleet, type NetnsFleet } from '../../e2e/hosts/netns';
import type { CheckOutcome, StageRunRecord } from '../../shared/api';
import { renderText, translator } from '../../shared/i18n';
import { STAGE_NAMESPACES } from '../../shared/stages';
import { amw } from '../support/cli';
import { setHccnConfig, type HccnStubConfig } from '../support/hccn-tool';

/**
 * The distributed stage end to end on a simulated fleet, THROUGH THE STAGE (the CLI and
 * core.call('stages.run')): four hosts, each in its own network namespace with its own address,
 * hostname and real sshd, each with the stub hccn_tool (a test double: no NPU NIC exists here)
 * printing the knowledge's samples; the probe, the fleet checks, then a real torchrun gloo
 * all_reduce across the namespaces (Debian's CPU PyTorch). Faults are real: nft inside a
 * namespace blocks the rendezvous and HCCL port ranges or drops everything.
 */
function skipReason(): string | null {
  const fleet = netnsFleetSupported();
  if (!fleet.ok) return fleet.reason;
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import torch.distributed'], { stdio: 'ignore' });
  } catch {
    return 'no PyTorch in /usr/bin/python3 (Debian python3-torch)';
  }
  return null;
}
const reason = skipReason();
const d = reason ? describe.skip : describe;
const t = translator('en', STAGE_NAMESPACES);
const en = (x: CheckOutcome['summary']) => renderText(t, 'en', x);
const LEFT = 'distributed_allreduce|torch.distributed.run';
const EIGHT = [0, 1, 2, 3, 4, 5, 6, 7];

let fleet: NetnsFleet;
let core: Core;
let home: string;

/** A healthy host's stub: its own NPU subnet per host, so no device IP is duplicated. */
const healthy = (i: number): HccnStubConfig => ({
  ip: Object.fromEntries(EIGHT.map((dev) => [String(dev), `192.${60 + i}.${dev}.10`])),
  netdetect: Object.fromEntries(EIGHT.map((dev) => [String(dev), `192.${60 + i}.${dev}.1`])),
});

async function runStage(input: Record<string, unknown>): Promise<StageRunRecord> {
  const started = await core.call('stages.run', { stage: 'distributed', ...input } as never);
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return core.call('stages.get', { id: started.stageRunId });
}
const outcome = (r: StageRunRecord, id: string) => {
  const c = r.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id}: ${r.checks.map((x) => x.id).join(' ')}`);
  return c;
};
function expectNothingLeft() {
  for (const h of fleet.hosts) expect(fleet.processes(h, LEFT), h.name).toEqual([]);
}
const three = () => fleet.hosts.slice(0, 3).map((h) => h.name);

d(
  `distributed stage end to end on a namespace fleet${reason ? ` (skipped: ${reason})` : ''}`,
  () => {
    beforeAll(async () => {
      fleet = await startNetnsFleet(4, { prefix: 'de', profile: 'hccn-ok' });
      fleet.hosts.forEach((h, i) => setHccnConfig(h.sim, healthy(i)));
      home = mkdtempSync(join(tmpdir(), 'amw-dist-e2e-'));
      core = createCore({
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
          group: 'pod',
        });
      // added and inventoried, as a user would: the first contact accepts each host's key, which
      // the CLI (strict about host keys) then finds in the same store
      await core.jobs.wait((await core.call('fleet.inventory', {})).jobId);
    }, 180_000);

    afterAll(async () => {
      await core?.close();
      await fleet?.destroy();
      if (home) rmSync(home, { recursive: true, force: true });
    }, 60_000);

    it('CLI: 3 hosts probed, checked, and a real torchrun gloo all_reduce: bandwidth per size, stored, in the report', async () => {
      const r = await amw(
        [
          '--db',
          join(home, 'amw.db'),
          'run',
          three().join(','),
          '--stage',
          'distributed',
          '--deadline',
          '300',
          '--json',
        ],
        { AMW_HOME: home },
      );
      const out = JSON.parse(r.stdout);
      const row = out.checks.find((c: { id: string }) => c.id === 'dist.collective');
      expect(
        out.collective,
        JSON.stringify(out.checks.filter((c: { status: string }) => c.status === 'fail')),
      ).toMatchObject({
        launcher: 'torchrun',
        backend: 'gloo',
        worldSize: 3,
        ok: true,
      });
      expect(out.collective.busBandwidthGBs).toBeGreaterThan(0);
      expect(row.status).toBe('pass');
      // it says gloo was used and why: no NPU with torch_npu here
      expect(row.summary).toMatch(
        /^torchrun \(gloo\), 3 ranks: all_reduce correct, bus bandwidth [\d.]+ GB\/s\. No NPU with torch_npu on every host: the all_reduce ran on the CPU with the gloo backend\./,
      );

      const doc = await core.call('distributed.get', { stageRunId: out.stageRunId });
      // each host's own namespace address, from the probe, is what the ranks used
      expect(doc.hosts.map((h) => h.address)).toEqual(
        fleet.hosts.slice(0, 3).map((h) => h.address),
      );
      expect(doc.collective!.bandwidth.map((b) => b.bytes)).toEqual([65536, 1 << 20, 16 << 20]);
      for (const b of doc.collective!.bandwidth) expect(b.busBandwidthGBs).toBeGreaterThan(0);
      expect(
        doc.collective!.notes.find(
          (n) => n.key.endsWith('torchrunDetail') || n.key.endsWith('launcher'),
        )?.params,
      ).toMatchObject({ launcher: 'torchrun' });

      const html = await core.call('reports.export', {
        source: { sessionId: (await core.call('stages.get', { id: out.stageRunId })).sessionId },
        format: 'html',
        language: 'en',
      });
      const text = html.text ?? '';
      const section = text.slice(text.indexOf('<section id="distributed">'));
      expect(section).toMatch(/torchrun · gloo · 3 ranks · [\d.]+ GB\/s/);
      expect(section).toContain(`<tr><td>${16 << 20}</td><td>`);
      expectNothingLeft();
    }, 420_000);

    it('the rendezvous and HCCL port ranges blocked on one host: dist.collective fails naming the cause, every rank’s log kept, nothing left; the rerun passes', async () => {
      const first = fleet.hosts[0]!;
      fleet.blockPorts(first, 29400, 29410, 'drop');
      fleet.blockPorts(first, 60000, 60031, 'drop');
      let failed: StageRunRecord;
      try {
        failed = await runStage({ hosts: three(), collectiveDeadlineS: 90 });
      } finally {
        fleet.heal(first);
      }
      const c = outcome(failed, 'dist.collective');
      expect(c.status).toBe('fail');
      // the summary names what failed and where; the remediation names the cause and its fix
      expect(en(c.summary)).toMatch(/^torchrun \(gloo\): .*de[12]/);
      expect((c.evidence as { cause: { id: string } }).cause.id).toBe('rendezvousUnreachable');
      expect(en(c.remediation!)).toMatch(/^Likely cause: /);
      const doc = await core.call('distributed.get', { stageRunId: failed.id });
      expect(doc.collective!.ok).toBe(false);
      // every host's launcher log is stored as evidence, each naming its host
      const nodeLogs = doc.collective!.logs.filter((l) => l.file === 'node.log');
      expect(new Set(nodeLogs.map((l) => l.host))).toEqual(new Set(three()));
      expect(nodeLogs.some((l) => /RendezvousConnectionError|rendezvous/i.test(l.text))).toBe(true);
      // the probe's checks of the same run were kept
      expect(outcome(failed, 'dist.link@de0#0').status).toBe('pass');
      expectNothingLeft();

      const again = await runStage({ hosts: three(), collectiveDeadlineS: 300 });
      expect(
        outcome(again, 'dist.collective').status,
        en(outcome(again, 'dist.collective').summary),
      ).toBe('pass');
      expectNothingLeft();
    }, 600_000);

    it('a link DOWN and a TLS switch that differs on one host, a host that never answers: each shown, the rest kept, the collective blocked', async () => {
      const [, faulty, , silent] = fleet.hosts;
      setHccnConfig(faulty!.sim, {
        ...healthy(1),
        link: { '3': 'DOWN' },
        tls: Object.fromEntries(EIGHT.map((dev) => [String(dev), 1 as const])),
      });
      fleet.silence(silent!);
      let run: StageRunRecord;
      try {
        run = await runStage({ hosts: fleet.hosts.map((h) => h.name), hostTimeoutS: 15 });
      } finally {
        fleet.heal(silent!);
        setHccnConfig(faulty!.sim, healthy(1));
      }
      // the device check fails on that NPU of that host only
      expect(outcome(run, 'dist.link@de1#3')).toMatchObject({
        status: 'fail',
        host: 'de1',
        device: 3,
      });
      expect(en(outcome(run, 'dist.link@de1#3').summary)).toBe('NPU 3: link DOWN.');
      expect(outcome(run, 'dist.link@de1#2').status).toBe('pass');
      expect(
        run.checks.filter((c) => c.id.startsWith('dist.link@de0#')).map((c) => c.status),
      ).toEqual(Array(8).fill('pass'));
      // the fleet check fails on the odd host, each host's value shown
      const tls = outcome(run, 'dist.tls@de1');
      expect(tls.status).toBe('fail');
      expect(en(tls.summary)).toMatch(/TLS switch here: on; most of the fleet: off/);
      expect(outcome(run, 'dist.tls@de0').status).toBe('pass');
      const doc = await core.call('distributed.get', { stageRunId: run.id });
      expect(doc.disagreements.find((x) => x.item === 'tls')?.values).toEqual([
        { host: 'de0', value: '0' },
        { host: 'de1', value: '1' },
        { host: 'de2', value: '0' },
      ]);
      // the silent host: reported, the others still checked, the collective not started and why
      const gone = outcome(run, 'dist.reach@de3');
      expect(gone.status).toBe('fail');
      expect(en(gone.summary)).toMatch(/^Did not answer: No answer within 15 s/);
      expect(run.checks.filter((c) => c.host === 'de3')).toHaveLength(1);
      const coll = outcome(run, 'dist.collective');
      expect(coll.status).toBe('skip');
      expect(en(coll.summary)).toBe(
        'Not run: de3 did not answer (1 of the run’s hosts); a collective needs every host, the others were still checked.',
      );
      expect(doc.collective).toBeNull();
      expect(run.status).toBe('fail');
      expectNothingLeft();
    }, 300_000);
  },
);
