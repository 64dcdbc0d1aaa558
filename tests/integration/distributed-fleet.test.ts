import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNetnsFleet, netnsFleetSupported, type NetnsFleet } from '../../e2e/hosts/netns';
import { fleetService, type FleetService } from '../../e2e/hosts/netns-hosts';
import {
  runCollective,
  type CollectiveResult,
} from '../../electron/core/stages/distributed/collective';
import { hccnToolFiles, HCCN_TOOL_PATH, setHccnConfig } from '../support/hccn-tool';

/**
 * The collective for real: three simulated hosts, each in its own network namespace with its own
 * address, hostname and sshd, Debian's CPU PyTorch inside; torchrun's c10d rendezvous and gloo's
 * all_reduce cross the namespaces' veths. Faults are real too: nft inside a namespace.
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

// a real plog line (knowledge §5.2, vllm-project/vllm-ascend #5461)
const EI0006_PLOG =
  '[PID: 749] 2025-12-29-03:16:15.787.356 Get_Socket_Timeout(EI0006): Getting socket times out. Reason: 1. The remote does not initiate a connect request. some NPUs in the cluster are abnormal.';

const PATTERN = 'distributed_allreduce|torch.distributed.run';

let fleet: NetnsFleet;
let service: FleetService;

const run = (deadlineMs: number, extra: { sizesBytes?: number[] } = {}) =>
  runCollective(service.collectiveHosts(), {
    deadlineMs,
    signal: new AbortController().signal,
    sizesBytes: extra.sizesBytes ?? [65536, 1 << 20],
  });

function expectNothingLeft() {
  for (const h of fleet.hosts) expect(fleet.processes(h, PATTERN), h.name).toEqual([]);
}

/** What a failed run said, for the assertion message. */
const explain = (r: CollectiveResult) =>
  JSON.stringify(
    {
      error: r.error,
      cause: r.cause,
      logs: r.logs.map((l) => [l.host, l.file, l.text.slice(-1500)]),
    },
    null,
    1,
  );

function keys(r: CollectiveResult) {
  return { error: r.error?.key, cause: r.cause?.id, notes: r.notes.map((n) => n.key) };
}

d(`collective across network namespaces${reason ? ` (skipped: ${reason})` : ''}`, () => {
  beforeAll(async () => {
    fleet = await startNetnsFleet(3, {
      prefix: 'df',
      profile: 'no-cann',
      hostOptions: () => ({ usrLocalFiles: hccnToolFiles({ link: { '1': 'DOWN' } }) }),
    });
    service = fleetService(fleet);
  }, 120_000);

  afterAll(async () => {
    service?.close();
    await fleet?.destroy();
  }, 60_000);

  it('the hosts are apart: own address, own hostname, the stub hccn_tool answers per device', async () => {
    const [a, b] = service.collectiveHosts();
    const out = await a!.transport.exec(
      `hostname; getent hosts df1; ${HCCN_TOOL_PATH} -i 1 -link -g; ${HCCN_TOOL_PATH} -i 0 -link -g`,
    );
    expect(
      out.stdout
        .split('\n')
        .slice(0, 4)
        .map((l) => l.replace(/\s+/g, ' ')),
    ).toEqual(['df0', `${fleet.hosts[1]!.address} df1`, 'link status: DOWN', 'link status: UP']);
    expect((await b!.transport.exec('hostname')).stdout.trim()).toBe('df1');
    // a host's stub config changes while it runs: the TLS switch of device 0 turned on
    setHccnConfig(fleet.hosts[1]!.sim, { tls: { '0': 1 } });
    expect((await b!.transport.exec(`${HCCN_TOOL_PATH} -i 0 -tls -g`)).stdout).toBe(
      'dev_id:0, tls switch[1](0:disable, 1:enable), tls preconfigured[1](0:non-preset, 1:preset), tls alarm time threshold[60]days\n',
    );
  });

  it('a real torchrun gloo all_reduce across 3 namespaces: world size 3, bandwidth > 0 per size', async () => {
    const r = await run(240_000);
    expect(keys(r).error, explain(r)).toBeUndefined();
    expect(r).toMatchObject({ ok: true, launcher: 'torchrun', backend: 'gloo', worldSize: 3 });
    expect(r.bandwidth.map((b) => b.bytes)).toEqual([65536, 1 << 20]);
    for (const b of r.bandwidth) {
      expect(b.us).toBeGreaterThan(0);
      expect(b.algBandwidthGBs).toBeGreaterThan(0);
      // all_reduce on 3 ranks: busbw = algbw × 2(n−1)/n = algbw × 4/3
      expect(b.busBandwidthGBs).toBeCloseTo((b.algBandwidthGBs * 4) / 3, 9);
    }
    expect(r.busBandwidthGBs).toBe(r.bandwidth.at(-1)!.busBandwidthGBs);
    expect(keys(r).notes).toContain('stage-distributed:collective.note.gloo');
    expectNothingLeft();
  }, 300_000);

  it('the rendezvous port range blocked on the first host: ok false, cause named, every rank’s log, nothing left', async () => {
    fleet.blockPorts(fleet.hosts[0]!, 29400, 29410, 'drop');
    try {
      // deadline 90 s: the rendezvous gives up after 30 s, well before it
      const r = await run(90_000);
      expect(r.ok).toBe(false);
      expect(keys(r).error).toBe('stage-distributed:collective.error.exited');
      expect(r.cause?.id).toBe('rendezvousUnreachable');
      // the error names a host that failed first, not the first host, stopped because of them
      expect(['df1', 'df2']).toContain(r.error?.params?.host);
      expect(r.cause?.fix.key).toBe('stage-distributed:collective.cause.rendezvousUnreachable.fix');
      // every host's launcher log was gathered, each naming its host
      expect(new Set(r.logs.filter((l) => l.file === 'node.log').map((l) => l.host))).toEqual(
        new Set(['df0', 'df1', 'df2']),
      );
      const blocked = r.logs.find(
        (l) => l.host === r.error?.params?.host && l.file === 'node.log',
      )!;
      expect(blocked.text).toContain('RendezvousConnectionError');
      expect(keys(r).notes).toContain('stage-distributed:collective.note.killed');
      expectNothingLeft();
    } finally {
      fleet.heal(fleet.hosts[0]!);
    }
  }, 200_000);

  it('a hang is killed at the deadline on every host, no process left in any namespace', async () => {
    // the first host drops the rendezvous: the others wait on it longer than the deadline
    fleet.blockPorts(fleet.hosts[0]!, 29400, 29410, 'drop');
    // a CANN plog on the third host, as HCCL leaves one (written "later" than the run's start)
    const plogDir = join(fleet.hosts[2]!.sim.dir, 'home', 'ascend', 'log', 'debug', 'plog');
    const plog = join(plogDir, 'plog-4242_20260318103352113.log');
    mkdirSync(plogDir, { recursive: true });
    writeFileSync(plog, `${EI0006_PLOG}\n`);
    const future = new Date(Date.now() + 3600_000);
    utimesSync(plog, future, future);
    try {
      const r = await run(8_000);
      expect(r.ok).toBe(false);
      expect(keys(r).error).toBe('stage-distributed:collective.error.deadline');
      expect(r.error?.params).toEqual({ seconds: 8 });
      // the plog was gathered with the ranks' logs, and HCCL's code in it names the cause
      expect(
        r.logs.find((l) => l.host === 'df2' && l.file.endsWith(basename(plog)))?.text,
      ).toContain('EI0006');
      expect(r.cause?.id).toBe('socketTimeout');
      expectNothingLeft();
    } finally {
      fleet.heal(fleet.hosts[0]!);
      rmSync(join(fleet.hosts[2]!.sim.dir, 'home', 'ascend'), { recursive: true, force: true });
    }
  }, 200_000);

  it('cancelled by the caller while the ranks run: every rank stopped, said so, a rerun works', async () => {
    const ctl = new AbortController();
    const seen: string[] = [];
    const r = await runCollective(service.collectiveHosts(), {
      deadlineMs: 240_000,
      signal: ctl.signal,
      sizesBytes: [1 << 20],
      progress: (_f, m) => {
        seen.push(m.key);
        // the moment the launchers are on their way, the user presses Cancel
        if (m.key.endsWith('progress.launching')) setTimeout(() => ctl.abort(), 1500);
      },
    });
    expect(keys(r).error).toBe('stage-distributed:collective.error.cancelled');
    expect(seen).toContain('stage-distributed:collective.progress.stopping');
    expect(keys(r).notes).toContain('stage-distributed:collective.note.killed');
    expectNothingLeft();
    const again = await run(240_000);
    expect(again.ok, explain(again)).toBe(true);
  }, 400_000);

  it('a host that never answers: a clear error naming it, nothing started elsewhere', async () => {
    fleet.silence(fleet.hosts[2]!);
    try {
      const hosts = service.collectiveHosts();
      const r = await runCollective(hosts, {
        deadlineMs: 20_000,
        signal: new AbortController().signal,
      });
      expect(r.ok).toBe(false);
      expect(keys(r).error).toBe('stage-distributed:collective.error.unreachable');
      expect(r.error?.params?.host).toBe('df2');
      for (const h of fleet.hosts.slice(0, 2)) expect(fleet.processes(h, PATTERN)).toEqual([]);
    } finally {
      fleet.heal(fleet.hosts[2]!);
    }
  }, 200_000);
});
