import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type ParsedMetricFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import { MetricsExporter } from '../../electron/core/hosts/metrics-exporter';
import { startServer } from '../../electron/server/serve';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import { amw, exitOf, spawnAmw } from '../support/cli';

/**
 * `amw export-metrics` and serve's /metrics against simulated hosts (real sshd) whose npu-smi is
 * the stub printing a real sample (tests/fixtures/npu-smi/info-alarm.txt: eight 910B4, NPU 2 in
 * Alarm). The textfile is read back with a Prometheus text-format parser, not by regex.
 */
const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;

const MIB = 1024 * 1024;

/** One series of a family by its labels (exactly one must match). */
function value(fams: ParsedMetricFamily[], name: string, labels: Record<string, string>): number {
  const fam = fams.find((f) => f.name === name);
  if (!fam) throw new Error(`no ${name}`);
  const hits = fam.metrics.filter((m) =>
    Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
  );
  if (hits.length !== 1) throw new Error(`${hits.length} series of ${name} match`);
  return Number(hits[0]!.value);
}

function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

d('npu-smi metrics for Prometheus from the live monitor', () => {
  let up: SimHost;
  let down: SimHost;
  let home: string;
  let textDir: string;

  beforeAll(async () => {
    up = await startSimHost('metrics-up', 'chip-alarm');
    down = await startSimHost('metrics-down', 'ascend-910b');
    home = mkdtempSync(join(tmpdir(), 'amw-metrics-'));
    textDir = mkdtempSync(join(tmpdir(), 'amw-textfile-'));
    const core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    try {
      await registerSimHost(core, up, { name: 'm1' });
      await registerSimHost(core, down, { name: 'm2' });
    } finally {
      await core.close();
    }
    await down.stop(); // registered, then gone: a node that is down
  }, 120_000);

  afterAll(async () => {
    await up?.stop();
    await down?.stop();
    for (const x of [home, textDir]) if (x) rmSync(x, { recursive: true, force: true });
  });

  it('--once writes the textfile atomically: every chip of the sample, the down host as up 0 and a scrape error', async () => {
    const r = await amw(
      [
        'export-metrics',
        'm1',
        'm2',
        '--textfile',
        textDir,
        '--interval',
        '1',
        '--once',
        '--accept-new-host-key',
      ],
      { AMW_HOME: home },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0); // a host that is down is a metric, not a failed command
    expect(r.stdout.trim()).toBe(join(textDir, 'amw_npu.prom'));
    // only the finished file: the temporary one was renamed over it
    expect(readdirSync(textDir)).toEqual(['amw_npu.prom']);
    const fams = parsePrometheusTextFormat(readFileSync(join(textDir, 'amw_npu.prom'), 'utf8'));
    expect(value(fams, 'amw_host_up', { host: 'm1' })).toBe(1);
    expect(value(fams, 'amw_host_up', { host: 'm2' })).toBe(0);
    expect(value(fams, 'amw_scrape_errors_total', { host: 'm1' })).toBe(0);
    expect(value(fams, 'amw_scrape_errors_total', { host: 'm2' })).toBeGreaterThanOrEqual(1);
    // the sample's figures (info-alarm.txt): NPU 2 chip 0 is 82.7 W, 33 °C, 2654 / 32768 MB, Alarm
    const chip2 = { host: 'm1', npu: '2', chip: '0' };
    expect(value(fams, 'amw_npu_power_watts', chip2)).toBe(82.7);
    expect(value(fams, 'amw_npu_temperature_celsius', chip2)).toBe(33);
    expect(value(fams, 'amw_npu_hbm_used_bytes', chip2)).toBe(2654 * MIB);
    expect(value(fams, 'amw_npu_hbm_total_bytes', chip2)).toBe(32768 * MIB);
    expect(value(fams, 'amw_npu_aicore_utilization_ratio', chip2)).toBe(0);
    expect(value(fams, 'amw_npu_health_state', { ...chip2, state: 'Alarm' })).toBe(1);
    expect(value(fams, 'amw_npu_health_state', { ...chip2, state: 'OK' })).toBe(0);
    // NPU 7 chip 0: 81.6 W, 37 °C, 2653 MB of HBM used, OK
    const chip7 = { host: 'm1', npu: '7', chip: '0' };
    expect(value(fams, 'amw_npu_power_watts', chip7)).toBe(81.6);
    expect(value(fams, 'amw_npu_temperature_celsius', chip7)).toBe(37);
    expect(value(fams, 'amw_npu_hbm_used_bytes', chip7)).toBe(2653 * MIB);
    expect(value(fams, 'amw_npu_health_state', { ...chip7, state: 'OK' })).toBe(1);
    // eight chips of m1, none of the down host (no stale figures for it)
    const power = fams.find((f) => f.name === 'amw_npu_power_watts')!;
    expect(power.type).toBe('GAUGE');
    expect(power.metrics.map((m) => m.labels!.host)).toEqual(Array(8).fill('m1'));
    expect(fams.find((f) => f.name === 'amw_scrape_errors_total')!.type).toBe('COUNTER');
    // the sample prints 0 / 0 for DDR memory (a 910B has HBM only): the parser reads no DDR,
    // so there is no series rather than a made-up 0
    expect(fams.find((f) => f.name === 'amw_npu_memory_total_bytes')?.metrics ?? []).toEqual([]);
  }, 300_000);

  it('without --once the file is rewritten after every reading until Ctrl+C (the built amw)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-textfile-live-'));
    try {
      const child = spawnAmw(['export-metrics', 'm1', '--textfile', dir, '--interval', '1'], {
        AMW_HOME: home,
      });
      const done = exitOf(child);
      const file = join(dir, 'amw_npu.prom');
      const stamp = () => {
        try {
          const fams = parsePrometheusTextFormat(readFileSync(file, 'utf8'));
          return value(fams, 'amw_host_last_reading_timestamp_seconds', { host: 'm1' });
        } catch {
          return null; // not written yet
        }
      };
      const until = async (ok: () => boolean) => {
        const deadline = Date.now() + 120_000;
        while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      };
      await until(() => stamp() !== null);
      const first = stamp()!;
      // a later reading replaced the file whole (the parser reads it at any moment)
      await until(() => (stamp() ?? 0) > first);
      expect(stamp()!).toBeGreaterThan(first);
      child.kill('SIGINT');
      const r = await done;
      expect(r.code).toBe(0);
      expect(readdirSync(dir)).toEqual(['amw_npu.prom']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('an unknown host name or a missing directory is refused at once', async () => {
    const noHost = await amw(['export-metrics', 'nope', '--textfile', textDir, '--once'], {
      AMW_HOME: home,
    });
    expect(noHost.code).not.toBe(0);
    expect(noHost.stderr).toContain('nope');
    const noDir = await amw(
      ['export-metrics', 'm1', '--textfile', join(textDir, 'missing'), '--once'],
      { AMW_HOME: home },
    );
    expect(noDir.code).not.toBe(0);
    expect(noDir.stderr).toContain('missing');
    expect(existsSync(join(textDir, 'missing'))).toBe(false);
  }, 60_000);

  describe('serve mode /metrics and a host that drops while watched', () => {
    let core: Core;
    let exporter: MetricsExporter;
    let server: Awaited<ReturnType<typeof startServer>>;
    let extra: SimHost;

    beforeAll(async () => {
      extra = await startSimHost('metrics-drop', 'ascend-910b');
      core = createCore({
        env: { AMW_HOME: home } as NodeJS.ProcessEnv,
        hostKeyPolicy: 'accept-new',
        userKnownHosts: [],
      });
      await registerSimHost(core, extra, { name: 'm3' });
      exporter = new MetricsExporter(core, { hosts: ['m1', 'm3'], intervalSec: 1 });
      exporter.start();
      await exporter.firstRound(120_000);
      server = await startServer(core, {
        token: 'metrics-token-0123456789',
        hostLabel: false,
        metrics: {
          render: () => exporter.metrics.render(),
          contentType: exporter.metrics.registry.contentType,
        },
      });
    }, 180_000);

    afterAll(async () => {
      await server?.close();
      await exporter?.stop();
      await core?.close();
      await extra?.stop();
    });

    it('refused without the token or with a wrong one; served with it as a bearer header', async () => {
      expect((await get(server.port, '/metrics')).status).toBe(401);
      const wrong = await get(server.port, '/metrics', { Authorization: 'Bearer not-the-token' });
      expect(wrong.status).toBe(401);
      expect(wrong.body).not.toContain('amw_host_up');
      const ok = await get(server.port, '/metrics', {
        Authorization: 'Bearer metrics-token-0123456789',
      });
      expect(ok.status).toBe(200);
      expect(ok.type).toContain('text/plain');
      const fams = parsePrometheusTextFormat(ok.body);
      expect(value(fams, 'amw_host_up', { host: 'm1' })).toBe(1);
      expect(value(fams, 'amw_npu_power_watts', { host: 'm3', npu: '0', chip: '0' })).toBe(87.2);
    }, 60_000);

    it('serve mode takes in a monitor the UI opened, and drops its figures when the UI closes it', async () => {
      const served = new MetricsExporter(core, { hosts: [], intervalSec: 1, adopt: true });
      served.start();
      try {
        const { monitorId } = await core.call('monitor.start', { name: 'm1', intervalSec: 1 });
        const until = async (ok: () => boolean) => {
          const deadline = Date.now() + 60_000;
          while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        };
        await until(() => !!served.metrics.reading('m1')?.sample);
        let fams = parsePrometheusTextFormat(await served.metrics.render());
        expect(
          value(fams, 'amw_npu_temperature_celsius', { host: 'm1', npu: '4', chip: '0' }),
        ).toBe(39);
        await core.call('monitor.stop', { monitorId });
        await until(() => served.metrics.reading('m1') === undefined);
        fams = parsePrometheusTextFormat(await served.metrics.render());
        // no figures left that would read as current
        expect(fams.find((f) => f.name === 'amw_host_up')?.metrics ?? []).toEqual([]);
        expect(fams.find((f) => f.name === 'amw_npu_power_watts')?.metrics ?? []).toEqual([]);
      } finally {
        await served.stop();
      }
    }, 120_000);

    it('a host whose sshd goes away mid-watch turns to up 0 with a scrape error; the exporter keeps serving', async () => {
      await extra.stop();
      const deadline = Date.now() + 120_000;
      while (exporter.metrics.reading('m3')?.error === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 250));
      const res = await get(server.port, '/metrics?token=metrics-token-0123456789');
      expect(res.status).toBe(200);
      const fams = parsePrometheusTextFormat(res.body);
      expect(value(fams, 'amw_host_up', { host: 'm3' })).toBe(0);
      expect(value(fams, 'amw_scrape_errors_total', { host: 'm3' })).toBeGreaterThanOrEqual(1);
      expect(value(fams, 'amw_host_up', { host: 'm1' })).toBe(1);
    }, 180_000);
  });
});
