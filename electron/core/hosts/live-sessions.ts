import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Client, ClientChannel } from 'ssh2';
import type { MonitorSample } from '../../../shared/api';
import { AmwError, toWireError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { EventBus } from '../events';
import { parseNpuSmiInfo } from '../parsers/npu-smi';
import type { ConnectOptions, SshTarget } from '../ssh/connect';
import type { SshPool } from '../ssh/pool';
import { remoteCommand } from '../ssh/quote';
import { streamLocal } from '../local/local-exec';

const MARK = '@@AMW-SAMPLE@@';

/** The remote loop: one channel, npu-smi every N seconds, a marker after each reading. */
const MONITOR_LOOP = [
  'smi=$(command -v npu-smi 2>/dev/null)',
  'for p in /usr/local/sbin/npu-smi /usr/local/bin/npu-smi; do [ -z "$smi" ] && [ -x "$p" ] && smi=$p; done',
  '[ -n "$smi" ] || { echo "npu-smi not found on this host" >&2; exit 127; }',
  `while :; do "$smi" info 2>&1; echo '${MARK}'; sleep "$1"; done`,
].join('\n');

interface Live {
  channel: ClientChannel;
  release: () => void;
}

/**
 * Long-lived channels on pooled connections: the npu-smi monitor and interactive terminals.
 * Each holds its connection open until stopped; a dropped connection ends it with an error event.
 */
export class LiveSessions {
  private readonly monitors = new Map<string, { stop: () => void }>();
  private readonly terminals = new Map<string, Live>();

  constructor(
    private readonly pool: SshPool,
    private readonly bus: EventBus,
  ) {}

  /** Opens a channel on a pooled connection and keeps the connection in use until `release`. */
  private async open(
    target: SshTarget,
    opts: ConnectOptions,
    start: (c: Client) => Promise<ClientChannel>,
  ): Promise<Live> {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const channel = await new Promise<ClientChannel>((resolve, reject) => {
      this.pool
        .use(target, opts, async (client) => {
          const ch = await start(client);
          resolve(ch);
          await held;
        })
        .catch(reject);
    });
    return { channel, release };
  }

  /**
   * Starts the npu-smi loop on a host over one kept-open channel, or on this machine (`remote`
   * null: the built-in host, when the engine runs on the Ascend server itself) as a child process.
   */
  async startMonitor(
    host: string,
    remote: { target: SshTarget; opts: ConnectOptions } | null,
    intervalSec: number,
  ): Promise<string> {
    const monitorId = randomUUID();
    const command = remoteCommand('sh', '-c', MONITOR_LOOP, 'amw-monitor', String(intervalSec));
    const feed = this.monitorFeed(monitorId, host);
    if (!remote) {
      const stop = new AbortController();
      this.monitors.set(monitorId, { stop: () => stop.abort() });
      streamLocal(command, {
        signal: stop.signal,
        onStdout: feed.data,
        onStderr: feed.stderr,
      }).then(
        (r) => feed.closed(r.code),
        (err: unknown) =>
          feed.closed(err instanceof AmwError && err.code === 'CANCELLED' ? null : -1),
      );
      return monitorId;
    }
    const live = await this.open(
      remote.target,
      remote.opts,
      (client) =>
        new Promise((resolve, reject) =>
          client.exec(command, (err, ch) =>
            err
              ? reject(
                  new AmwError(
                    'DISCONNECTED',
                    msg('errors.text.monitorStartFailed', { error: err.message }),
                  ),
                )
              : resolve(ch),
          ),
        ),
    );
    this.monitors.set(monitorId, { stop: () => stopChannel(live) });
    live.channel.on('data', feed.data);
    live.channel.stderr.on('data', feed.stderr);
    live.channel.on('close', (code: number | null) => {
      live.release();
      feed.closed(code);
    });
    return monitorId;
  }

  /** Turns the loop's output into samples, and its end into `monitor.ended`. */
  private monitorFeed(monitorId: string, host: string) {
    const decoder = new StringDecoder('utf8');
    let buffer = '';
    let stderr = '';
    return {
      data: (chunk: Buffer) => {
        buffer += decoder.write(chunk);
        let at: number;
        while ((at = buffer.indexOf(MARK)) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + MARK.length).replace(/^\r?\n/, '');
          this.bus.emit('monitor.sample', sampleOf(monitorId, host, block));
        }
        if (buffer.length > 1_000_000) buffer = ''; // a runaway reading: drop it rather than grow
      },
      stderr: (d: Buffer) => {
        if (stderr.length < 64 * 1024) stderr += String(d);
      },
      closed: (code: number | null) => {
        // stopped on request: a clean end
        if (!this.monitors.delete(monitorId))
          return this.bus.emit('monitor.ended', { monitorId, error: null });
        const error =
          code === 127
            ? // the loop's own words for it (no npu-smi: no Ascend driver), in the reader's language
              toWireError(new AmwError('NOT_FOUND', msg('errors.text.npuSmiMissing')))
            : toWireError(
                new AmwError(
                  'DISCONNECTED',
                  msg('errors.text.monitorClosed', { code: code ?? '—', stderr: stderr.trim() }),
                ),
              );
        this.bus.emit('monitor.ended', { monitorId, error });
      },
    };
  }

  stopMonitor(monitorId: string): void {
    const live = this.monitors.get(monitorId);
    if (!live) throw new AmwError('NOT_FOUND', msg('errors.text.monitorGone'), { monitorId });
    this.monitors.delete(monitorId);
    live.stop();
  }

  async openTerminal(
    target: SshTarget,
    opts: ConnectOptions,
    cols: number,
    rows: number,
  ): Promise<string> {
    const terminalId = randomUUID();
    const live = await this.open(
      target,
      opts,
      (client) =>
        new Promise((resolve, reject) =>
          client.shell({ term: 'xterm-256color', cols, rows }, (err, ch) =>
            err
              ? reject(
                  new AmwError(
                    'DISCONNECTED',
                    msg('errors.text.shellFailed', { error: err.message }),
                  ),
                )
              : resolve(ch),
          ),
        ),
    );
    this.terminals.set(terminalId, live);
    const decoder = new StringDecoder('utf8');
    const forward = (chunk: Buffer) =>
      this.bus.emit('terminal.data', { terminalId, data: decoder.write(chunk) });
    live.channel.on('data', forward);
    live.channel.stderr.on('data', forward);
    live.channel.on('close', (code: number | null) => {
      this.terminals.delete(terminalId);
      live.release();
      this.bus.emit('terminal.exit', { terminalId, code: code ?? null, error: null });
    });
    return terminalId;
  }

  private terminal(terminalId: string): Live {
    const live = this.terminals.get(terminalId);
    if (!live) throw new AmwError('NOT_FOUND', msg('errors.text.terminalGone'), { terminalId });
    return live;
  }

  input(terminalId: string, data: string): void {
    this.terminal(terminalId).channel.write(data);
  }

  resize(terminalId: string, cols: number, rows: number): void {
    this.terminal(terminalId).channel.setWindow(rows, cols, 0, 0);
  }

  closeTerminal(terminalId: string): void {
    stopChannel(this.terminal(terminalId));
  }

  closeAll(): void {
    for (const m of this.monitors.values()) m.stop();
    for (const live of this.terminals.values()) stopChannel(live);
    this.monitors.clear();
    this.terminals.clear();
  }
}

function stopChannel(live: Live): void {
  try {
    live.channel.signal('KILL');
  } catch {
    // not every server takes signals; closing is enough
  }
  live.channel.close();
  live.release();
}

/** One npu-smi reading as the monitor streams it; a reading it cannot parse says why. */
function sampleOf(monitorId: string, host: string, block: string): MonitorSample {
  const parsed = parseNpuSmiInfo(block);
  return {
    monitorId,
    host,
    at: new Date().toISOString(),
    chips: parsed.devices.map((d) => ({
      npu: d.npu,
      chip: d.chip,
      health: d.health,
      aicorePct: d.aicorePct,
      hbmUsedMB: d.hbmUsedMB,
      hbmTotalMB: d.hbmTotalMB,
      memUsedMB: d.memUsedMB,
      memTotalMB: d.memTotalMB,
      tempC: d.tempC,
      powerW: d.powerW,
    })),
    warnings: parsed.error ? [parsed.error.message, ...parsed.warnings] : parsed.warnings,
  };
}
