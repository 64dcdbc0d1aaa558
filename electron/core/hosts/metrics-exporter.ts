import type { MonitorSample } from '../../../shared/api';
import type { Core } from '../api/core';
import { NpuMetrics } from './npu-metrics';

export interface ExporterOptions {
  hosts: string[];
  /** Seconds between npu-smi readings (the monitor's interval, 1…60). */
  intervalSec: number;
  password?: string;
  /** Every reading or failure (the textfile is rewritten on it). */
  onChange?: () => void;
  /** Also take in the readings of monitors others started on this engine (serve mode). */
  adopt?: boolean;
}

/**
 * Keeps the live monitor (`monitor.start`: npu-smi over one kept-open SSH channel) running on
 * each host and feeds its readings to the metrics. A host that cannot be reached or whose
 * channel drops is a scrape error and `amw_host_up 0`, never a crash: its monitor is started
 * again after a pause, so the host comes back by itself.
 */
export class MetricsExporter {
  readonly metrics = new NpuMetrics();
  private readonly ours = new Map<string, string>(); // monitorId → host
  /** Monitors others started whose readings we take in (serve mode): monitorId → host. */
  private readonly adopted = new Map<string, string>();
  private readonly answered = new Set<string>();
  private readonly starting = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly offs: (() => void)[] = [];
  private stopped = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly core: Pick<Core, 'call' | 'on'>,
    private readonly opts: ExporterOptions,
  ) {}

  get hosts(): readonly string[] {
    return this.opts.hosts;
  }

  start(): void {
    this.offs.push(
      this.core.on('monitor.sample', (s) => this.onSample(s)),
      this.core.on('monitor.ended', ({ monitorId, error }) => {
        const other = this.adopted.get(monitorId);
        if (other !== undefined) {
          this.adopted.delete(monitorId);
          // closed by its user: the host is no longer watched (no stale figures); dropped: down
          if (error) this.fail(other, error.message, false);
          else this.metrics.forget(other);
          this.opts.onChange?.();
          return;
        }
        const host = this.ours.get(monitorId);
        if (host === undefined) return;
        this.ours.delete(monitorId);
        if (this.stopped) return;
        this.fail(host, error?.message ?? 'the monitor stopped');
      }),
    );
    for (const host of this.opts.hosts) {
      this.metrics.watch(host);
      void this.startOn(host);
    }
  }

  /** Resolves once every host has answered or failed at least once (or after `timeoutMs`). */
  firstRound(timeoutMs: number): Promise<void> {
    if (this.allAnswered()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        for (const h of this.opts.hosts)
          if (!this.answered.has(h)) this.fail(h, `no npu-smi reading within ${timeoutMs} ms`);
        resolve();
      }, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.offs.splice(0).forEach((off) => off());
    await Promise.all(
      [...this.ours.keys()].map((monitorId) =>
        this.core.call('monitor.stop', { monitorId }).catch(() => undefined),
      ),
    );
    this.ours.clear();
  }

  private async startOn(host: string): Promise<void> {
    // a connection still being made (a slow host past the first round's wait): not a second one
    if (this.starting.has(host)) return;
    this.starting.add(host);
    try {
      const { monitorId } = await this.core.call('monitor.start', {
        name: host,
        intervalSec: this.opts.intervalSec,
        password: this.opts.password,
      });
      if (this.stopped) {
        await this.core.call('monitor.stop', { monitorId }).catch(() => undefined);
        return;
      }
      this.ours.set(monitorId, host);
    } catch (err) {
      if (!this.stopped) this.fail(host, err instanceof Error ? err.message : String(err));
    } finally {
      this.starting.delete(host);
    }
  }

  private onSample(s: MonitorSample): void {
    const host = this.ours.get(s.monitorId);
    if (host === undefined) {
      if (!this.opts.adopt) return;
      this.adopted.set(s.monitorId, s.host);
    }
    // npu-smi answered with an error and no chips (driver not loaded…): a failed reading
    if (!s.chips.length && s.warnings.length) this.metrics.failed(s.host, s.warnings[0]!);
    else this.metrics.sample(s);
    this.answer(s.host);
  }

  private fail(host: string, error: string, retry = true): void {
    this.metrics.failed(host, error.slice(0, 300));
    this.answer(host);
    if (this.stopped || !retry) return;
    // try again after a pause (at least 5 s, so an unreachable host is not hammered)
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        if (!this.stopped) void this.startOn(host);
      },
      Math.max(5, this.opts.intervalSec) * 1000,
    );
    t.unref();
    this.timers.add(t);
  }

  private answer(host: string): void {
    this.answered.add(host);
    this.opts.onChange?.();
    if (this.allAnswered()) this.waiters.splice(0).forEach((w) => w());
  }

  private allAnswered(): boolean {
    return this.opts.hosts.every((h) => this.answered.has(h));
  }
}
