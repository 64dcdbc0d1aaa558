import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ProfileName } from './profiles';
import { simHostsSupported, startSimHost, type SimHost, type SimHostOptions } from './sim-host';

/**
 * A simulated multi-host fleet: every host in its OWN network namespace with its own address on a
 * private /24 out of 10.0.0.0/8, joined by a bridge that lives in a hub namespace the fleet
 * creates, each host with its own hostname (UTS namespace), an /etc/hosts naming every member (the
 * file `ip netns exec` binds over /etc/hosts) and a real sshd (sim-host.ts). This machine reaches
 * the hosts through one more veth on the same bridge; all traffic stays inside namespaces the fleet
 * creates and is gone with them.
 */
export interface FleetMember {
  name: string;
  /** Its network namespace. */
  ns: string;
  /** The address other hosts (and this machine) reach it on. */
  address: string;
  /** Its interface toward the fleet inside its namespace. */
  iface: string;
  sim: SimHost;
}

export interface NetnsFleet {
  hub: string;
  hosts: FleetMember[];
  /** Drops (or rejects) inbound TCP to ports from..to on one host: a firewall that blocks HCCL's range. */
  blockPorts(host: FleetMember, from: number, to: number, how?: 'drop' | 'reject'): void;
  /** Drops every inbound packet: the host never answers (not even SSH). */
  silence(host: FleetMember): void;
  /** Removes the faults set above. */
  heal(host: FleetMember): void;
  /**
   * Command lines of the processes in the host's network namespace matching a pgrep -f pattern
   * (`ip netns pids` ∩ `pgrep -f`): what is still running there.
   */
  processes(host: FleetMember, pattern: string): string[];
  destroy(): Promise<void>;
}

export function netnsFleetSupported(): { ok: true } | { ok: false; reason: string } {
  const sim = simHostsSupported();
  if (!sim.ok) return sim;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
  } catch {
    return { ok: false, reason: '`ip netns` is not available (iproute2)' };
  }
  if (!existsSync('/usr/sbin/nft') && !existsSync('/usr/bin/nft'))
    return { ok: false, reason: 'nft (nftables) is not installed' };
  return { ok: true };
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
const inNs = (ns: string, cmd: string, args: string[], input?: string) =>
  execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], {
    stdio: 'pipe',
    encoding: 'utf8',
    input,
  });

let fleetCounter = 0;

export interface FleetOptions {
  /** Host names are `${prefix}${i}`; also their hostnames. Lower case letters and digits. */
  prefix?: string;
  profile?: ProfileName | ((i: number) => ProfileName);
  /** Extra sim-host options per host (stub tools under /usr/local, verbose sshd …). */
  hostOptions?: (i: number) => Pick<SimHostOptions, 'usrLocalFiles' | 'verbose'>;
  /** How many sshd start at once. */
  concurrency?: number;
}

export async function startNetnsFleet(count: number, opts: FleetOptions = {}): Promise<NetnsFleet> {
  if (count < 1 || count > 250) throw new Error('a fleet has 1 to 250 hosts');
  const supported = netnsFleetSupported();
  if (!supported.ok) throw new Error(supported.reason);
  const id = `${process.pid % 10000}${fleetCounter++ % 10}`;
  // one /24 per fleet: 10.(100 + pid % 100).(counter).0 keeps parallel test files apart
  const subnet = `10.${100 + (process.pid % 100)}.${(process.pid * 3 + fleetCounter * 17) % 256}`;
  const prefix = opts.prefix ?? 'node';
  const hub = `amw-fh${id}`;
  const rootIf = `r${id}`;
  const hosts: FleetMember[] = [];
  const namespaces: string[] = [];
  const cleanup = () => {
    for (const ns of namespaces.reverse()) {
      try {
        ip('netns', 'del', ns); // takes its veth ends with it
      } catch {
        // already gone
      }
      rmSync(`/etc/netns/${ns}`, { recursive: true, force: true });
    }
  };
  try {
    ip('netns', 'add', hub);
    namespaces.push(hub);
    ip('-n', hub, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', hub, 'link', 'set', 'br0', 'up');
    // this machine's door onto the bridge
    ip('link', 'add', rootIf, 'type', 'veth', 'peer', 'name', `${rootIf}p`, 'netns', hub);
    ip('-n', hub, 'link', 'set', `${rootIf}p`, 'master', 'br0', 'up');
    ip('addr', 'add', `${subnet}.254/24`, 'dev', rootIf);
    ip('link', 'set', rootIf, 'up');
    const members = Array.from({ length: count }, (_, i) => ({
      name: `${prefix}${i}`,
      ns: `amw-f${id}-${i}`,
      address: `${subnet}.${i + 1}`,
    }));
    const etcHosts = [
      '127.0.0.1 localhost',
      ...members.map((m) => `${m.address} ${m.name}`),
      '',
    ].join('\n');
    for (const [i, m] of members.entries()) {
      ip('netns', 'add', m.ns);
      namespaces.push(m.ns);
      const hubSide = `v${id}-${i}`;
      ip('-n', m.ns, 'link', 'set', 'lo', 'up');
      ip('link', 'add', hubSide, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', m.ns);
      ip('link', 'set', hubSide, 'netns', hub);
      ip('-n', hub, 'link', 'set', hubSide, 'master', 'br0', 'up');
      ip('-n', m.ns, 'addr', 'add', `${m.address}/24`, 'dev', 'eth0');
      ip('-n', m.ns, 'link', 'set', 'eth0', 'up');
      mkdirSync(`/etc/netns/${m.ns}`, { recursive: true });
      writeFileSync(`/etc/netns/${m.ns}/hosts`, etcHosts);
    }
    const queue = [...members.entries()];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [i, m] = next;
        const profile =
          typeof opts.profile === 'function' ? opts.profile(i) : (opts.profile ?? 'no-cann');
        const sim = await startSimHost(m.name, profile, {
          ...opts.hostOptions?.(i),
          network: { ns: m.ns, hostAddress: `${subnet}.254`, nsAddress: m.address, destroy() {} },
          listen: m.address,
          hostname: m.name,
        });
        hosts[i] = { ...m, iface: 'eth0', sim };
      }
    };
    await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 8, count) }, worker));
  } catch (err) {
    await Promise.all(hosts.filter(Boolean).map((h) => h.sim.stop().catch(() => undefined)));
    cleanup();
    throw err;
  }

  const nft = (h: FleetMember, script: string) => inNs(h.ns, 'nft', ['-f', '-'], script);
  return {
    hub,
    hosts,
    blockPorts(h, from, to, how = 'drop') {
      const verdict = how === 'drop' ? 'drop' : 'reject with tcp reset';
      nft(
        h,
        [
          'table inet amwfault {',
          '  chain input {',
          '    type filter hook input priority 0; policy accept;',
          `    iifname "${h.iface}" tcp dport ${from}-${to} ${verdict}`,
          '  }',
          '}',
          '',
        ].join('\n'),
      );
    },
    silence(h) {
      nft(
        h,
        [
          'table inet amwsilent {',
          '  chain input {',
          '    type filter hook input priority 0; policy accept;',
          `    iifname "${h.iface}" drop`,
          '  }',
          '}',
          '',
        ].join('\n'),
      );
    },
    heal(h) {
      for (const t of ['amwfault', 'amwsilent']) {
        try {
          inNs(h.ns, 'nft', ['delete', 'table', 'inet', t]);
        } catch {
          // that fault was not set
        }
      }
    },
    processes(h, pattern) {
      const inside = new Set(
        execFileSync('ip', ['netns', 'pids', h.ns], { encoding: 'utf8' })
          .split(/\s+/)
          .filter(Boolean),
      );
      let matching: string[] = [];
      try {
        matching = execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' })
          .split(/\s+/)
          .filter(Boolean);
      } catch {
        // pgrep exits 1 when nothing matches
      }
      return matching
        .filter((pid) => inside.has(pid))
        .map((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
          } catch {
            return `(pid ${pid}, gone)`;
          }
        });
    },
    async destroy() {
      await Promise.all(hosts.map((h) => h.sim.stop().catch(() => undefined)));
      cleanup();
    },
  };
}
