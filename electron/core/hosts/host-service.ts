import { readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type {
  ConnectionTest,
  FleetRow,
  HostRecord,
  HostSummary,
  Inventory,
  InventorySummary,
} from '../../../shared/api';
import { INVENTORY_COLUMNS } from '../../../shared/api/hosts';
import { AmwError, toWireError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { ArtifactStore } from '../db/artifacts';
import type { EventBus } from '../events';
import type { JobContext } from '../jobs/runner';
import { resourcesDir } from '../paths';
import type { ConnectOptions, SshEndpoint, SshTarget } from '../ssh/connect';
import { exec, type ExecResult } from '../ssh/exec';
import {
  execLocal,
  LOCAL_HOST_NAME,
  localTransport,
  type HostTransport,
} from '../local/local-exec';
import { sshTransport } from '../local/ssh-transport';
import { KnownHosts } from '../ssh/known-hosts';
import { SshPool } from '../ssh/pool';
import type { HostKeyPrompts } from './host-key-prompts';
import type { SecretStore } from './secrets';
import { parseInventory } from './inventory-parse';
import { eachLimited } from '../jobs/each-limited';
import type { HostRepository } from './repository';

export interface HostServiceOptions {
  knownHostsFile: string;
  /** Other known_hosts files to trust (read-only), by default ~/.ssh/known_hosts. */
  userKnownHostsFiles?: string[];
}

const FLEET_CONCURRENCY = 8;

/**
 * A probe as sent: inventory.sh (the POSIX fallback) with lib.py and the named Python parts
 * embedded for hosts that have python3. `parts` ['inventory', 'env'] runs both, one round trip.
 */
export function composeProbe(
  name: string,
  parts: string[],
  inject: Record<string, string> = {},
): string {
  const dir = join(resourcesDir(), 'probes');
  const py = [
    readFileSync(join(dir, 'lib.py'), 'utf8'),
    // values the parts read (arguments, embedded scripts) travel base64-encoded: no quoting of
    // user text into Python source, whatever it contains
    ...Object.entries(inject).map(
      ([k, v]) =>
        `${k} = base64.b64decode(${JSON.stringify(Buffer.from(v).toString('base64'))}).decode("utf-8")`,
    ),
    ...parts.map((p) => readFileSync(join(dir, `${p}.py`), 'utf8')),
    `emit(${JSON.stringify(name)})\n`,
  ].join('\n');
  return readFileSync(join(dir, 'inventory.sh'), 'utf8').replace('@@PROBE_PY@@', () => py);
}

export class HostService {
  readonly pool = new SshPool();
  readonly knownHosts: KnownHosts;

  constructor(
    private readonly repo: HostRepository,
    private readonly prompts: HostKeyPrompts,
    private readonly artifacts: ArtifactStore,
    private readonly bus: EventBus,
    opts: HostServiceOptions,
    readonly secrets: SecretStore,
  ) {
    this.knownHosts = new KnownHosts(
      opts.knownHostsFile,
      opts.userKnownHostsFiles ?? [join(homedir(), '.ssh', 'known_hosts')],
    );
  }

  private endpoint(h: HostRecord): SshEndpoint {
    return {
      name: h.name,
      host: h.hostname,
      port: h.port,
      username: h.username ?? userInfo().username,
      identityFiles: h.identityFile ? [h.identityFile] : undefined,
    };
  }

  /** The built-in host `local` is this machine: commands run as child processes, no SSH. */
  isLocal(name: string): boolean {
    return name === LOCAL_HOST_NAME;
  }

  target(name: string): SshTarget {
    if (this.isLocal(name))
      throw new AmwError('VALIDATION', msg('errors.text.localNoTerminal'), { name });
    const host = this.repo.get(name);
    return {
      ...this.endpoint(host),
      jumps: this.repo.jumpChain(host).map((j) => this.endpoint(j)),
    };
  }

  /** A password typed for this call wins; otherwise the remembered one (desktop app only). */
  connectOptions(name: string, password: string | undefined, signal?: AbortSignal): ConnectOptions {
    return {
      knownHosts: this.knownHosts,
      onUnknownHostKey: (info) => this.prompts.decide(info),
      password: password ?? this.secrets.password(this.repo.get(name).id),
      askPassphrase: (file) => this.prompts.passphrase(file),
      signal,
    };
  }

  async test(name: string, password?: string): Promise<ConnectionTest> {
    const started = Date.now();
    try {
      const res = this.isLocal(name)
        ? await execLocal('uname -srm', { timeoutMs: 15_000 })
        : // afresh, not through a live connection: the test is of what logs in now
          await this.pool.fresh(this.target(name), this.connectOptions(name, password), (c) =>
            exec(c, 'uname -srm', { timeoutMs: 15_000 }),
          );
      return {
        ok: true,
        host: name,
        latencyMs: Date.now() - started,
        system: res.stdout.trim() || null,
        error: null,
      };
    } catch (err) {
      if (err instanceof AmwError && (err.code === 'NOT_FOUND' || err.code === 'VALIDATION'))
        throw err;
      return { ok: false, host: name, latencyMs: null, system: null, error: toWireError(err) };
    }
  }

  /** One SSH round trip: the probe goes in on stdin, one JSON document comes back. */
  async runProbe(
    name: string,
    probe: { name: string; parts: string[]; timeoutMs: number; inject?: Record<string, string> },
    ctx: Pick<JobContext, 'signal' | 'progress'>,
    password?: string,
  ): Promise<ExecResult> {
    const script = composeProbe(probe.name, probe.parts, probe.inject);
    if (this.isLocal(name)) {
      // this machine: the same script on stdin of the same `sh -s`, as a child process
      this.repo.get(name);
      ctx.progress(0.3, { key: 'probing', params: { host: name } });
      return execLocal('sh -s', { stdin: script, timeoutMs: probe.timeoutMs, signal: ctx.signal });
    }
    ctx.progress(0.1, { key: 'connecting', params: { host: name } });
    return this.pool.use(
      this.target(name),
      this.connectOptions(name, password, ctx.signal),
      (c) => {
        ctx.progress(0.3, { key: 'probing', params: { host: name } });
        return exec(c, 'sh -s', { stdin: script, timeoutMs: probe.timeoutMs, signal: ctx.signal });
      },
    );
  }

  /**
   * exec / stream / put / get on a host, the same surface for this machine (child processes,
   * copies) and SSH hosts (the pooled connection, SFTP, checksummed). For stage runners that need
   * more than one probe round trip (launchers, moving files between hosts).
   */
  transport(name: string, password?: string, signal?: AbortSignal): HostTransport {
    this.repo.get(name);
    if (this.isLocal(name)) return localTransport;
    return sshTransport(
      (fn) => this.pool.use(this.target(name), this.connectOptions(name, password, signal), fn),
      signal,
    );
  }

  /** Stores an inventory snapshot with the raw probe output as its evidence. */
  saveInventory(name: string, inventory: Inventory, rawStdout: string): number {
    const raw = this.artifacts.put(rawStdout, 'inventory-probe', 'application/json');
    const snapshotId = this.repo.saveInventory(this.repo.get(name).id, inventory, raw);
    this.bus.emit('hosts.changed', { name });
    return snapshotId;
  }

  async inventory(
    name: string,
    ctx: Pick<JobContext, 'signal' | 'progress'>,
    password?: string,
  ): Promise<{ snapshotId: number; inventory: Inventory }> {
    this.repo.get(name);
    const res = await this.runProbe(
      name,
      { name: 'inventory', parts: ['inventory'], timeoutMs: 180_000 },
      ctx,
      password,
    );
    const inventory = parseInventory(res.stdout, name, new Date().toISOString());
    if (res.code !== 0)
      inventory.warnings.push(`probe exited with ${res.code}: ${res.stderr.slice(-300)}`);
    const snapshotId = this.saveInventory(name, inventory, res.stdout);
    ctx.progress(1, { key: 'stored', params: { host: name } });
    return { snapshotId, inventory };
  }

  /** Many hosts at once, at most FLEET_CONCURRENCY in flight; one host failing fails only itself. */
  async fleetInventory(names: string[], ctx: JobContext) {
    const results: {
      host: string;
      ok: boolean;
      snapshotId?: number;
      error?: ReturnType<typeof toWireError>;
    }[] = [];
    let done = 0;
    await eachLimited(names, FLEET_CONCURRENCY, ctx, async (name) => {
      try {
        const r = await this.inventory(name, { signal: ctx.signal, progress: () => undefined });
        results.push({ host: name, ok: true, snapshotId: r.snapshotId });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        results.push({ host: name, ok: false, error: toWireError(err) });
      }
      done++;
      ctx.progress(done / names.length, {
        key: 'fleetHost',
        params: { host: name, done, total: names.length },
      });
    });
    return results.sort((a, b) => a.host.localeCompare(b.host));
  }

  fleetTable(group?: string): FleetRow[] {
    const hosts = this.repo.summaries(group).filter((h) => h.inventory);
    return fleetDifferences(hosts);
  }
}

const FLEET_COLUMNS: readonly (keyof InventorySummary)[] = INVENTORY_COLUMNS;

/**
 * For each column, the value most hosts of a group share is "the fleet's"; a host that differs is
 * flagged there. Health is flagged whenever it is not OK, whatever the others say.
 */
export function fleetDifferences(hosts: HostSummary[]): FleetRow[] {
  const groups = new Map<string, HostSummary[]>();
  for (const h of hosts) {
    const g = h.group ?? '';
    groups.set(g, [...(groups.get(g) ?? []), h]);
  }
  const rows: FleetRow[] = [];
  for (const members of groups.values()) {
    const majority = new Map<keyof InventorySummary, unknown>();
    for (const col of FLEET_COLUMNS) {
      const counts = new Map<string, { n: number; value: unknown }>();
      for (const h of members) {
        const v = h.inventory![col];
        const k = JSON.stringify(v);
        counts.set(k, { n: (counts.get(k)?.n ?? 0) + 1, value: v });
      }
      const sorted = [...counts.values()].sort((a, b) => b.n - a.n);
      // a tie has no majority: everyone who is not in the largest block is flagged
      majority.set(col, sorted[0]!.value);
    }
    for (const h of members) {
      const differs = FLEET_COLUMNS.filter((col) =>
        col === 'health'
          ? h.inventory!.health !== 'OK' && h.inventory!.health !== null
          : JSON.stringify(h.inventory![col]) !== JSON.stringify(majority.get(col)),
      );
      rows.push({ host: h, differs });
    }
  }
  return rows.sort(
    (a, b) =>
      (a.host.group ?? '').localeCompare(b.host.group ?? '') ||
      a.host.name.localeCompare(b.host.name),
  );
}
