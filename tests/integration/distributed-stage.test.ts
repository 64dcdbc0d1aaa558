import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import {
  registerSimHost,
  SIM_USER,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import type { CheckOutcome, StageRunRecord } from '../../shared/api';
import { translator, renderText } from '../../shared/i18n';
import { STAGE_NAMESPACES } from '../../shared/stages';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

/**
 * The distributed stage on simulated hosts: real sshd in mount namespaces, each with a stub
 * hccn_tool (a test double: no NPU NIC exists here) printing the knowledge's sample formats. One
 * host has NPU 3's link DOWN and TLS on where its peer has it off; a third "host" accepts TCP and
 * never speaks (an SSH server that hangs); the rank table given is not JSON.
 */
const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
const t = translator('en', STAGE_NAMESPACES);
const en = (x: CheckOutcome['summary']) => renderText(t, 'en', x);

let core: Core;
let home: string;
let silent: Server;
const sockets: Socket[] = [];
const sims: SimHost[] = [];
let run: StageRunRecord;

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

d('distributed stage on simulated hosts', () => {
  beforeAll(async () => {
    sims.push(
      ...(await Promise.all([
        startSimHost('dist-a', 'hccn-ok'),
        startSimHost('dist-b', 'hccn-faults'),
      ])),
    );
    silent = createServer((s) => sockets.push(s)); // accepts, never sends a banner
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    home = mkdtempSync(join(tmpdir(), 'amw-dist-'));
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    for (const s of sims) await registerSimHost(core, s, { group: 'pod1' });
    await core.call('hosts.add', {
      name: 'dist-silent',
      hostname: '127.0.0.1',
      port: (silent.address() as { port: number }).port,
      username: SIM_USER,
      identityFile: sims[0]!.clientKey,
      group: 'pod1',
    });
    run = await runStage({
      hosts: ['dist-a', 'dist-b', 'dist-silent'],
      // the silent host costs the whole timeout, but each of the others runs 64 stub pings (a
      // Python start each) in its round trip: 8 s timed them out on a loaded two-core machine
      hostTimeoutS: 20,
      collective: false,
      rankTable:
        '{\n  "version": "1.0",\n  "server_list": [\n    { "server_id": "dist-a", }\n  ]\n}',
      rankTableFile: 'bad-hccl.json',
    });
  }, 300_000);

  afterAll(async () => {
    await core?.close();
    for (const s of sockets) s.destroy();
    silent?.close();
    await Promise.all(sims.map((s) => s.stop()));
    rmSync(home, { recursive: true, force: true });
  });

  it('a device link DOWN fails that NPU of that host only', () => {
    const down = outcome(run, 'dist.link@dist-b#3');
    expect(down).toMatchObject({ status: 'fail', host: 'dist-b', device: 3 });
    expect(en(down.summary)).toBe('NPU 3: link DOWN.');
    expect(outcome(run, 'dist.link@dist-b#2').status).toBe('pass');
    expect(
      run.checks.filter((c) => c.id.startsWith('dist.link@dist-a')).map((c) => c.status),
    ).toEqual(Array(8).fill('pass'));
    // the probe read every getter of every NPU: nothing unreadable
    expect(outcome(run, 'dist.hccn@dist-a').status).toBe('pass');
    expect(outcome(run, 'dist.ip@dist-b#0')).toMatchObject({ status: 'pass' });
    expect(en(outcome(run, 'dist.ip@dist-b#0').summary)).toBe('NPU 0: 192.52.0.10/255.255.255.0.');
  });

  it('each NPU pings the other host’s NPUs (16 NPUs: every cross-host pair), in one round trip per host', async () => {
    const ping = outcome(run, 'dist.ping@dist-a');
    expect(ping.status).toBe('pass');
    expect(en(ping.summary)).toBe('64 pings from this host’s NPUs to other hosts’ NPUs: no loss.');
    const doc = await core.call('distributed.get', { stageRunId: run.id });
    expect(doc.pingPlan).toEqual({ rule: 'all-pairs', pairs: 128, devices: 16 });
    expect(doc.pings.filter((p) => p.lossPct === 0)).toHaveLength(128);
  });

  it('a TLS switch that differs between the two hosts fails, each host’s value shown', async () => {
    const tls = outcome(run, 'dist.tls@dist-b');
    expect(tls.status).toBe('fail');
    expect(en(tls.summary)).toMatch(/TLS switch here: on; most of the fleet: off/);
    const doc = await core.call('distributed.get', { stageRunId: run.id });
    expect(doc.disagreements.find((x) => x.item === 'tls')?.values).toEqual([
      { host: 'dist-a', value: '0' },
      { host: 'dist-b', value: '1' },
    ]);
    expect(doc.hosts.find((h) => h.host === 'dist-b')?.devices).toHaveLength(8);
  });

  it('a host that never answers is reported; the others were checked all the same', async () => {
    const gone = outcome(run, 'dist.reach@dist-silent');
    expect(gone.status).toBe('fail');
    expect(en(gone.summary)).toBe(
      'Did not answer: No answer within 20 s; the other hosts were still checked.',
    );
    expect(run.checks.filter((c) => c.host === 'dist-silent')).toHaveLength(1);
    expect(outcome(run, 'dist.reach@dist-a').status).toBe('pass');
    expect(run.status).toBe('fail');
  });

  it('a malformed rank table is one clear failure naming the file, line and column', () => {
    const rt = outcome(run, 'dist.rank-table');
    expect(rt.status).toBe('fail');
    expect(en(rt.summary)).toMatch(
      /^bad-hccl\.json: 1 problem: Not JSON: .*\(line 4, column 30\)\.$/,
    );
  });

  it('CLI: --tag picks the group, --json prints the documented shape; rank-table writes a usable table', async () => {
    const db = join(home, 'amw.db');
    // the silent host would cost its timeout again: a tag of the two that answer
    await core
      .call('hosts.update', { name: 'dist-silent', patch: { group: null } } as never)
      .catch(() => undefined);
    const r = await amw(
      [
        '--db',
        db,
        'run',
        '--tag',
        'pod1',
        '--stage',
        'distributed',
        '--no-collective',
        '--host-timeout',
        '20',
        '--json',
      ],
      { AMW_HOME: home },
    );
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual([
      'session',
      'stage',
      'stageRunId',
      'hosts',
      'status',
      'checks',
      'collective',
    ]);
    expect(out.stage).toBe('distributed');
    expect(out.hosts).toEqual(expect.arrayContaining(['dist-a', 'dist-b']));
    expect(
      out.checks.find(
        (c: { id: string; host: string; device?: number }) =>
          c.id === 'dist.link' && c.host === 'dist-b' && c.device === 3,
      ),
    ).toMatchObject({ status: 'fail' });
    expect(out.collective).toBeNull();
    expect(r.code).toBe(1);

    // no hosts and no tag, or a rank table that cannot be read: a clear usage error, nothing run
    const none = await amw(['--db', db, 'run', '--stage', 'distributed'], { AMW_HOME: home });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Give hosts (HOST[,HOST…]) or --tag TAG.');
    const missing = await amw(
      [
        '--db',
        db,
        'run',
        'dist-a',
        '--stage',
        'distributed',
        '--rank-table',
        '/nonexistent/hccl.json',
      ],
      { AMW_HOME: home },
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Cannot read the rank table /nonexistent/hccl.json');
    const untagged = await amw(['--db', db, 'run', '--tag', 'nope', '--stage', 'distributed'], {
      AMW_HOME: home,
    });
    expect(untagged.stderr).toContain('No host has the tag or group “nope”.');

    const file = join(tempDir(), 'hccl.json');
    const w = await amw(['--db', db, 'distributed', 'rank-table', 'dist-a,dist-b', '--out', file], {
      AMW_HOME: home,
    });
    expect(w.stderr).toBe('');
    expect(w.stdout).toMatch(/Wrote .*hccl\.json: 2 servers, 16 ranks\./);
    const table = readFileSync(file, 'utf8');
    expect(JSON.parse(table)).toMatchObject({
      version: '1.0',
      server_count: '2',
      status: 'completed',
    });
    // the table written is the one the stage accepts for these hosts
    const again = await runStage({
      hosts: ['dist-a', 'dist-b'],
      collective: false,
      rankTable: table,
      rankTableFile: file,
    });
    expect(en(outcome(again, 'dist.rank-table').summary)).toMatch(
      /version 1\.0, 2 servers, 16 ranks, consistent with the hosts/,
    );
    writeFileSync(file, '{"version": "3.1", "server_list": []}');
    const bad = await amw(
      [
        '--db',
        db,
        'run',
        'dist-a',
        '--stage',
        'distributed',
        '--no-collective',
        '--rank-table',
        file,
        '--json',
      ],
      { AMW_HOME: home },
    );
    const badDoc = JSON.parse(bad.stdout);
    expect(badDoc.checks.find((c: { id: string }) => c.id === 'dist.rank-table').summary).toMatch(
      /Unknown rank table version “3\.1”/,
    );
  }, 300_000);

  it('the report shows the fleet matrix, what disagrees and the collective, host text escaped', async () => {
    const html = await core.call('reports.export', {
      source: { sessionId: run.sessionId },
      format: 'html',
      language: 'en',
    });
    expect(html.text).toContain('<section id="distributed">');
    expect(html.text).toContain('<code>dist-silent</code>');
    expect(html.text).toMatch(/What disagrees/);
    const md = await core.call('reports.export', {
      source: { sessionId: run.sessionId },
      format: 'md',
      language: 'zh-CN',
    });
    expect(md.text).toContain('## 分布式（HCCL）');
    // statuses in the report's language, as every other section writes them
    expect(md.text).toContain('| dist-silent | ✗ 失败 |');
  });
});
