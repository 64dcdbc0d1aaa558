import type { CheckOutcome, CheckStatus } from '../../../../shared/api';
import { msg, type Msg, type MsgParam } from '../../../../shared/api/text';
import type {
  CollectiveSummary,
  DeviceFacts,
  HostDistFacts,
  PingPlan,
  PingResult,
  RankTableReport,
} from '../../../../shared/stages/distributed/api';
import { blockingRules } from './firewall';
import { disagreements, fleetRanks, hcclPorts, majority, sharedEnvNames, tlsValue } from './fleet';
import type { FleetRules } from './knowledge';

/** Everything the fleet checks read: each host's facts, the rank table, the collective. */
export interface FleetFacts {
  hosts: HostDistFacts[];
  rankTable: RankTableReport & { missing?: number };
  collective: CollectiveSummary | null;
  /** Why there is no collective: turned off, or hosts that failed before it. */
  collectiveState: 'ran' | 'off' | 'blocked';
  blockedHosts: number;
  /** The NPU-to-NPU pings run (absent: none were planned or run). */
  pings?: PingResult[];
  pingPlan?: PingPlan;
}

/** One result of a fleet check: about a host (and a device), or the fleet when neither is set. */
export type FleetOutcome = Omit<CheckOutcome, 'id' | 'title' | 'waiver'>;

export interface FleetCheckDef {
  id: string;
  title: Msg;
  /** Pure: the same facts and rules give the same outcomes. */
  evaluate(facts: FleetFacts, rules: FleetRules): FleetOutcome[];
}

const T = (key: string, params?: Record<string, MsgParam>) =>
  msg(`stage-distributed:${key}`, params);

/** An outcome's id within the run: unique per check, host and device. */
export const outcomeId = (check: string, host?: string, device?: number) =>
  host === undefined
    ? check
    : device === undefined
      ? `${check}@${host}`
      : `${check}@${host}#${device}`;

/** The check an outcome id belongs to (`dist.link@node1#3` → `dist.link`). */
export const baseCheckId = (id: string) => id.split('@')[0]!;

const out = (
  status: CheckStatus,
  summary: Msg,
  evidence: unknown,
  remediation: Msg | null,
  host?: string,
  device?: number,
): FleetOutcome => ({
  status,
  summary,
  evidence,
  remediation: status === 'pass' || status === 'skip' ? null : remediation,
  ...(host !== undefined ? { host } : {}),
  ...(device !== undefined ? { device } : {}),
});

const answering = (f: FleetFacts) => f.hosts.filter((h) => h.reachable);
const withNpus = (f: FleetFacts) => answering(f).filter((h) => h.devices.length > 0);
const worst = (a: CheckStatus, b: CheckStatus): CheckStatus => {
  const rank: Record<CheckStatus, number> = { pass: 0, skip: 0, warn: 1, fail: 2, error: 3 };
  return rank[b] > rank[a] ? b : a;
};
const why = (d: DeviceFacts, getter: string): Msg =>
  d.problems.find((p) => p.getter === getter)?.message ?? T('parse.empty');

/** One outcome per NPU of every answering host that has them. */
function perDevice(
  f: FleetFacts,
  each: (h: HostDistFacts, d: DeviceFacts) => FleetOutcome | null,
): FleetOutcome[] {
  return withNpus(f).flatMap((h) => h.devices.map((d) => each(h, d)).filter((o) => o !== null));
}

export const FLEET_CHECKS: FleetCheckDef[] = [
  {
    id: 'dist.reach',
    title: T('title.reach'),
    evaluate: (f) =>
      f.hosts.map((h) =>
        h.reachable
          ? out('pass', T('reach.pass'), { address: h.address }, null, h.host)
          : out(
              'fail',
              T('reach.fail', { error: h.error ?? '' }),
              { error: h.error },
              null,
              h.host,
            ),
      ),
  },
  {
    id: 'dist.hccn',
    title: T('title.hccn'),
    evaluate: (f) =>
      answering(f).map((h) => {
        // no distributed sections at all (python3 absent: the POSIX fallback ran): say that, not
        // "no hccn_tool"
        const gap = h.warnings.find(
          (w) => w.key === 'stage-distributed:facts.missing' && w.params?.section === 'dist_hccn',
        );
        if (gap) return out('warn', gap, { warnings: h.warnings }, T('hccn.fix'), h.host);
        // no NPU: nothing for hccn_tool to read, with or without the tool — not applicable,
        // never "read on 0 NPUs" as a pass
        if (h.npuCount === 0 && !h.devices.length)
          return out('skip', T('hccn.noNpu'), { npuCount: 0, tool: h.hccnTool }, null, h.host);
        if (!h.hccnTool)
          return out(
            'fail',
            T('hccn.missing', { count: h.npuCount }),
            { npuCount: h.npuCount },
            T('hccn.fix'),
            h.host,
          );
        const problems = h.devices.flatMap((d) =>
          d.problems.map((p) => ({ device: d.id, getter: p.getter, message: p.message })),
        );
        const evidence = {
          tool: h.hccnTool,
          devices: h.devices.length,
          problems,
          warnings: h.warnings,
        };
        if (!problems.length)
          return out(
            'pass',
            T('hccn.pass', { path: h.hccnTool, count: h.devices.length }),
            evidence,
            null,
            h.host,
          );
        const list = problems
          .slice(0, 5)
          .map((p) => T('hccn.problem', { device: p.device, getter: p.getter, what: p.message }));
        return out(
          'warn',
          T('hccn.problems', { count: problems.length, list }),
          evidence,
          T('hccn.fix'),
          h.host,
        );
      }),
  },
  {
    id: 'dist.link',
    title: T('title.link'),
    evaluate: (f) =>
      perDevice(f, (h, d) =>
        d.link === 'UP'
          ? out('pass', T('link.up', { device: d.id }), { link: 'UP' }, null, h.host, d.id)
          : d.link === 'DOWN'
            ? out(
                'fail',
                T('link.down', { device: d.id }),
                { link: 'DOWN' },
                T('link.fix', { device: d.id }),
                h.host,
                d.id,
              )
            : out(
                'warn',
                T('link.unread', { device: d.id, why: why(d, 'link') }),
                { link: null },
                T('hccn.fix'),
                h.host,
                d.id,
              ),
      ),
  },
  {
    id: 'dist.health',
    title: T('title.health'),
    evaluate: (f, r) =>
      perDevice(f, (h, d) => {
        const netdetect = d.netdetect || T('health.none');
        const ev = { netHealth: d.netHealth, netdetect: d.netdetect };
        const fix = T('health.fix', { device: d.id });
        if (d.netHealth === null)
          return out(
            'warn',
            T('health.unread', { device: d.id, why: why(d, 'net_health') }),
            ev,
            T('hccn.fix'),
            h.host,
            d.id,
          );
        if (r.netHealth.pass.includes(d.netHealth))
          return out(
            'pass',
            T('health.pass', { device: d.id, status: d.netHealth }),
            ev,
            null,
            h.host,
            d.id,
          );
        if (r.netHealth.warn.includes(d.netHealth))
          return out('warn', T('health.init', { device: d.id, netdetect }), ev, fix, h.host, d.id);
        return out(
          'fail',
          T('health.fail', { device: d.id, status: d.netHealth, netdetect }),
          ev,
          fix,
          h.host,
          d.id,
        );
      }),
  },
  {
    id: 'dist.ip',
    title: T('title.ip'),
    evaluate: (f, r) => {
      const owners = new Map<string, string[]>();
      for (const h of withNpus(f))
        for (const d of h.devices)
          if (d.ip)
            owners.set(d.ip.address, [
              ...(owners.get(d.ip.address) ?? []),
              `${h.host}/NPU ${d.id}`,
            ]);
      const fam = (a: string) => (a.includes(':') ? 'IPv6' : 'IPv4');
      const fleetFamily = majority([...owners.keys()].map(fam));
      return perDevice(f, (h, d) => {
        const fix = T('ip.fix');
        if (!d.ip) {
          const unread = d.problems.some((p) => p.getter === 'ip');
          return unread
            ? out(
                'warn',
                T('ip.unread', { device: d.id, why: why(d, 'ip') }),
                { ip: null },
                T('hccn.fix'),
                h.host,
                d.id,
              )
            : out('fail', T('ip.unconfigured', { device: d.id }), { ip: null }, fix, h.host, d.id);
        }
        const { address, netmask } = d.ip;
        const issues: { status: CheckStatus; message: Msg }[] = [];
        const others = (owners.get(address) ?? []).filter((o) => o !== `${h.host}/NPU ${d.id}`);
        if (others.length)
          issues.push({
            status: 'fail',
            message: T('ip.duplicate', { device: d.id, address, others }),
          });
        if (fleetFamily && fam(address) !== fleetFamily)
          issues.push({
            status: 'fail',
            message: T('ip.family', {
              device: d.id,
              address,
              family: fam(address),
              fleet: fleetFamily,
            }),
          });
        if (h.chip && r.subnets.pairedChips.some((c) => h.chip!.replace(/\s/g, '').includes(c))) {
          const k = r.subnets.pairOffset;
          const pairId = d.id < k ? d.id + k : d.id - k;
          const pair = h.devices.find((x) => x.id === pairId)?.ip;
          if (pair && subnet(pair.address, pair.netmask) !== subnet(address, netmask))
            issues.push({
              status: 'fail',
              message: T('ip.pairSubnet', {
                device: d.id,
                pair: pairId,
                address,
                netmask,
                pairAddress: pair.address,
              }),
            });
          if (d.id < k)
            for (const o of h.devices.filter((x) => x.id < k && x.id !== d.id && x.ip))
              if (subnet(o.ip!.address, o.ip!.netmask) === subnet(address, netmask)) {
                issues.push({
                  status: 'fail',
                  message: T('ip.groupSubnet', { device: d.id, other: o.id, address, netmask }),
                });
                break;
              }
        }
        const conf = h.hccnConf?.[`address_${d.id}`];
        if (conf && conf !== address)
          issues.push({ status: 'warn', message: T('ip.conf', { device: d.id, conf, address }) });
        const ev = { address, netmask, conf: conf ?? null, issues: issues.map((i) => i.message) };
        if (!issues.length)
          return out(
            'pass',
            T('ip.pass', { device: d.id, address, netmask }),
            ev,
            null,
            h.host,
            d.id,
          );
        const status = issues.reduce<CheckStatus>((s, i) => worst(s, i.status), 'pass');
        return out(status, summarise(issues), ev, fix, h.host, d.id);
      });
    },
  },
  {
    id: 'dist.optics',
    title: T('title.optics'),
    evaluate: (f) =>
      perDevice(f, (h, d) => {
        if (!d.optical) return null; // unreadable: reported once by dist.hccn
        if (d.optical.outOfRange.length)
          return out(
            'warn',
            T('optics.out', { device: d.id, list: d.optical.outOfRange }),
            d.optical,
            T('optics.fix'),
            h.host,
            d.id,
          );
        return out('pass', T('optics.pass', { device: d.id }), d.optical, null, h.host, d.id);
      }),
  },
  {
    id: 'dist.counters',
    title: T('title.counters'),
    evaluate: (f) =>
      perDevice(f, (h, d) => {
        if (!d.statErrors) return null;
        const list = Object.entries(d.statErrors).map(([k, v]) => `${k}=${v}`);
        if (list.length)
          return out(
            'warn',
            T('counters.errors', { device: d.id, list }),
            d.statErrors,
            T('counters.fix', { device: d.id }),
            h.host,
            d.id,
          );
        return out('pass', T('counters.pass', { device: d.id }), d.statErrors, null, h.host, d.id);
      }),
  },
  {
    id: 'dist.ping',
    title: T('title.ping'),
    evaluate: (f, r) => {
      if (!f.pings || !f.pingPlan) return [];
      const plan =
        f.pingPlan.rule === 'all-pairs'
          ? T('ping.allPairs', { pairs: f.pingPlan.pairs })
          : T('ping.ringSampled', {
              limit: r.pingMatrix.allPairsUpToDevices,
              samples: r.pingMatrix.samples,
              pairs: f.pingPlan.pairs,
            });
      return withNpus(f).map((h) => {
        const mine = f.pings!.filter((p) => p.from.host === h.host);
        const ev = {
          rule: f.pingPlan!.rule,
          pings: mine.map((p) => ({
            from: p.from.device,
            to: `${p.to.host}/${p.to.device}`,
            address: p.to.address,
            lossPct: p.lossPct,
          })),
        };
        if (!mine.length) return out('skip', T('ping.none', { plan }), ev, null, h.host);
        const issues: { status: CheckStatus; message: Msg; p: PingResult }[] = [];
        for (const p of mine) {
          const at = {
            device: p.from.device,
            peer: p.to.host,
            peerDevice: p.to.device,
            address: p.to.address,
          };
          if (p.lossPct === null)
            issues.push({
              status: 'warn',
              p,
              message: T('ping.unread', { ...at, why: p.problem ?? T('parse.empty') }),
            });
          else if (p.lossPct > 0)
            issues.push({
              status: p.lossPct >= 100 ? 'fail' : 'warn',
              p,
              message: T('ping.loss', { ...at, loss: p.lossPct }),
            });
        }
        if (!issues.length)
          return out('pass', T('ping.pass', { count: mine.length }), ev, null, h.host);
        const status = issues.reduce<CheckStatus>((s, i) => worst(s, i.status), 'pass');
        const first = issues[0]!.p;
        return out(
          status,
          summarise(issues.slice(0, 5)),
          ev,
          T('ping.fix', { device: first.from.device, address: first.to.address }),
          h.host,
        );
      });
    },
  },
  {
    id: 'dist.tls',
    title: T('title.tls'),
    evaluate: (f) => {
      const hosts = withNpus(f);
      const word = (v: string | null) =>
        v === '1'
          ? T('tls.on')
          : v === '0'
            ? T('tls.off')
            : v === 'mixed'
              ? T('tls.mixedValue')
              : T('versions.unknown');
      const fleet = majority(hosts.map(tlsValue).filter((v) => v !== 'mixed'));
      return hosts.map((h) => {
        const v = tlsValue(h);
        const perDevice = Object.fromEntries(
          h.devices.map((d) => [d.id, d.tls ? (d.tls.enabled ? 1 : 0) : null]),
        );
        const ev = { value: v, fleet, devices: perDevice };
        const fix = T('tls.fix');
        if (v === null) return out('warn', T('tls.unread'), ev, T('hccn.fix'), h.host);
        if (v === 'mixed')
          return out(
            'fail',
            T('tls.mixed', {
              value: h.devices
                .map((d) => `${d.id}:${d.tls ? (d.tls.enabled ? 1 : 0) : '?'}`)
                .join(' '),
            }),
            ev,
            fix,
            h.host,
          );
        if (fleet !== null && v !== fleet)
          return out(
            'fail',
            T('tls.differs', { value: word(v), fleet: word(fleet) }),
            ev,
            fix,
            h.host,
          );
        return out('pass', T('tls.pass', { value: word(v) }), ev, null, h.host);
      });
    },
  },
  {
    id: 'dist.versions',
    title: T('title.versions'),
    evaluate: (f, r) => {
      const hosts = answering(f).filter((h) => h.npuCount > 0 || h.cann || h.driver);
      const fleet = {
        cann: majority(hosts.map((h) => h.cann)),
        driver: majority(hosts.map((h) => h.driver)),
        firmware: majority(hosts.map((h) => h.firmware)),
      };
      return hosts.map((h) => {
        const issues: { status: CheckStatus; message: Msg }[] = [];
        for (const item of ['cann', 'driver', 'firmware'] as const) {
          const v = h[item];
          if (v !== fleet[item] && fleet[item] !== null) {
            const status: CheckStatus = r.versions.fail.includes(item) ? 'fail' : 'warn';
            issues.push({
              status,
              message: T('versions.differs', {
                item: T(`versions.item.${item}`),
                value: v ?? T('versions.unknown'),
                fleet: fleet[item],
              }),
            });
          }
        }
        const ev = { cann: h.cann, driver: h.driver, firmware: h.firmware, fleet };
        if (!issues.length)
          return out(
            'pass',
            T('versions.pass', {
              cann: h.cann ?? T('versions.unknown'),
              driver: h.driver ?? T('versions.unknown'),
              firmware: h.firmware ?? T('versions.unknown'),
            }),
            ev,
            null,
            h.host,
          );
        const status = issues.reduce<CheckStatus>((s, i) => worst(s, i.status), 'pass');
        return out(status, summarise(issues), ev, T('versions.fix'), h.host);
      });
    },
  },
  {
    id: 'dist.env',
    title: T('title.env'),
    evaluate: (f, r) => {
      const hosts = answering(f);
      const names = sharedEnvNames(hosts, r);
      const fleet = Object.fromEntries(
        names.map((n) => [n, majority(hosts.map((h) => h.env[n] ?? '\u0000unset'))]),
      );
      const shown = (v: string | null | undefined) =>
        v === undefined || v === null || v === '\u0000unset' ? T('env.unset') : v;
      return hosts.map((h) => {
        const issues: { status: CheckStatus; message: Msg }[] = [];
        for (const n of names) {
          const v = h.env[n] ?? '\u0000unset';
          if (v !== fleet[n])
            issues.push({
              status: r.env.mustMatch.includes(n) ? 'fail' : 'warn',
              message: T('env.differs', { name: n, value: shown(v), fleet: shown(fleet[n]) }),
            });
        }
        const ev = { env: h.env };
        if (!issues.length)
          return out('pass', T('env.pass', { count: names.length }), ev, null, h.host);
        const status = issues.reduce<CheckStatus>((s, i) => worst(s, i.status), 'pass');
        return out(status, summarise(issues), ev, T('env.fix'), h.host);
      });
    },
  },
  {
    id: 'dist.timeout',
    title: T('title.timeout'),
    evaluate: (f, r) => {
      const ranks = fleetRanks(f.hosts);
      const step =
        [...r.connectTimeout.byRanks].reverse().find((s) => ranks > s.ranksAbove) ??
        r.connectTimeout.byRanks[0]!;
      const needed = step.seconds;
      return answering(f).map((h) => {
        const issues: { status: CheckStatus; message: Msg }[] = [];
        const read = (name: string, dflt: number, min: number, max: number) => {
          const raw = h.env[name];
          if (raw === undefined) return dflt;
          const v = Number(raw);
          if (!/^\d+$/.test(raw.trim()) || v < min || v > max) {
            issues.push({
              status: 'fail',
              message: T('timeout.range', { name, value: raw.slice(0, 40), min, max }),
            });
            return null;
          }
          return v;
        };
        const connect = read(
          'HCCL_CONNECT_TIMEOUT',
          r.connectTimeout.default,
          r.connectTimeout.min,
          r.connectTimeout.max,
        );
        const exec = read(
          'HCCL_EXEC_TIMEOUT',
          r.execTimeout.default,
          r.execTimeout.min,
          r.execTimeout.max,
        );
        const shownConnect =
          h.env.HCCL_CONNECT_TIMEOUT === undefined
            ? T('timeout.defaulted', { value: connect ?? 0 })
            : String(connect);
        if (connect !== null && connect < needed)
          issues.push({
            status: 'warn',
            message: T('timeout.short', {
              connect: shownConnect,
              ranks,
              needed,
              source: T('timeout.source'),
            }),
          });
        if (connect !== null && exec !== null && exec !== 0 && connect >= exec)
          issues.push({ status: 'warn', message: T('timeout.order', { connect, exec }) });
        const ev = {
          ranks,
          needed,
          connect,
          exec,
          env: {
            HCCL_CONNECT_TIMEOUT: h.env.HCCL_CONNECT_TIMEOUT ?? null,
            HCCL_EXEC_TIMEOUT: h.env.HCCL_EXEC_TIMEOUT ?? null,
          },
        };
        if (!issues.length)
          return out('pass', T('timeout.pass', { connect: shownConnect, ranks }), ev, null, h.host);
        const status = issues.reduce<CheckStatus>((s, i) => worst(s, i.status), 'pass');
        return out(status, summarise(issues), ev, T('timeout.fix', { needed }), h.host);
      });
    },
  },
  {
    id: 'dist.memlock',
    title: T('title.memlock'),
    evaluate: (f, r) =>
      answering(f).map((h) => {
        const min = r.memlockMinKiB.value;
        if (h.memlock === null)
          return out('warn', T('memlock.unread'), { memlock: null }, T('memlock.fix'), h.host);
        if (h.memlock !== 'unlimited' && Number(h.memlock) < min)
          return out(
            'warn',
            T('memlock.low', { value: h.memlock, min }),
            { memlock: h.memlock, min },
            T('memlock.fix'),
            h.host,
          );
        return out(
          'pass',
          T('memlock.pass', { value: h.memlock }),
          { memlock: h.memlock },
          null,
          h.host,
        );
      }),
  },
  {
    id: 'dist.firewall',
    title: T('title.firewall'),
    evaluate: (f, r) =>
      answering(f).map((h) => {
        const p = hcclPorts(h, r);
        const ports = `${p.from}-${p.to}`;
        const ev = {
          tool: h.firewall.tool,
          readable: h.firewall.readable,
          blocking: h.firewall.blocking,
          ports,
          npu: r.ports.npu,
        };
        const fix = T('firewall.fix', { ports });
        if (h.firewall.tool === null)
          return out('pass', T('firewall.none', { tool: 'nft/iptables' }), ev, null, h.host);
        if (!h.firewall.readable)
          return out(
            'warn',
            T('firewall.unreadable', { tool: h.firewall.tool, ports }),
            ev,
            fix,
            h.host,
          );
        if (h.firewall.blocking.length)
          return out(
            'fail',
            T('firewall.blocked', {
              count: h.firewall.blocking.length,
              ports,
              rules: h.firewall.blocking.slice(0, 3),
            }),
            ev,
            fix,
            h.host,
          );
        return out('pass', T('firewall.pass', { ports, npu: r.ports.npu }), ev, null, h.host);
      }),
  },
  {
    id: 'dist.nic',
    title: T('title.nic'),
    evaluate: (f) =>
      answering(f).map((h) => {
        const fix = T('nic.fix');
        const nics = h.nics.map((n) => n.name);
        const ev = {
          HCCL_SOCKET_IFNAME: h.env.HCCL_SOCKET_IFNAME ?? null,
          HCCL_IF_IP: h.env.HCCL_IF_IP ?? null,
          nics: h.nics,
        };
        const pick = (name: string, value: string) => {
          const nic =
            name === 'HCCL_IF_IP'
              ? h.nics.find((n) => n.addresses.includes(value))
              : selectNic(value, h.nics);
          if (!nic)
            return out(
              'fail',
              T('nic.missing', { name, value, nics: nics.join(', ') }),
              ev,
              fix,
              h.host,
            );
          if (!nic.up)
            return out('fail', T('nic.down', { name, value, nic: nic.name }), ev, fix, h.host);
          return out(
            'pass',
            T('nic.pass', { name, nic: nic.name, addresses: nic.addresses.join(', ') }),
            ev,
            null,
            h.host,
          );
        };
        if (h.env.HCCL_IF_IP) return pick('HCCL_IF_IP', h.env.HCCL_IF_IP);
        if (h.env.HCCL_SOCKET_IFNAME) return pick('HCCL_SOCKET_IFNAME', h.env.HCCL_SOCKET_IFNAME);
        return out('pass', T('nic.unset'), ev, null, h.host);
      }),
  },
  {
    id: 'dist.rank-table',
    title: T('title.rankTable'),
    evaluate: (f) => {
      const rt = f.rankTable;
      const servers = Array.isArray((rt.doc as { server_list?: unknown[] } | null)?.server_list)
        ? (rt.doc as { server_list: unknown[] }).server_list.length
        : 0;
      const ev = {
        source: rt.source,
        file: rt.file,
        version: rt.version,
        ranks: rt.ranks,
        problems: rt.problems,
      };
      const fix = T('rankTable.fix');
      if (rt.source === 'generated') {
        if (!withNpus(f).length) return [out('skip', T('rankTable.noNpu'), ev, null)];
        if (!rt.doc)
          return [out('warn', T('rankTable.notGenerated', { count: rt.missing ?? 0 }), ev, fix)];
        return [out('pass', T('rankTable.generated', { servers, ranks: rt.ranks }), ev, null)];
      }
      const file = rt.file ?? 'hccl.json';
      if (!rt.problems.length)
        return [
          out(
            'pass',
            T('rankTable.pass', { file, version: rt.version ?? '', servers, ranks: rt.ranks }),
            ev,
            null,
          ),
        ];
      return [
        out(
          'fail',
          T('rankTable.problems', {
            file,
            count: rt.problems.length,
            first: rt.problems[0]!.message,
          }),
          ev,
          fix,
        ),
      ];
    },
  },
  {
    id: 'dist.collective',
    title: T('title.collective'),
    evaluate: (f) => {
      const c = f.collective;
      if (f.collectiveState === 'off' || !c)
        return [
          out(
            'skip',
            f.collectiveState === 'blocked'
              ? T('collectiveCheck.blocked', {
                  count: f.blockedHosts,
                  hosts: f.hosts
                    .filter((h) => !h.reachable)
                    .map((h) => h.host)
                    .join(', '),
                })
              : T('collectiveCheck.off'),
            null,
            null,
          ),
        ];
      const ev = {
        launcher: c.launcher,
        backend: c.backend,
        worldSize: c.worldSize,
        bandwidth: c.bandwidth,
        notes: c.notes,
        cause: c.cause ?? null,
        logs: c.logs.map((l) => ({ host: l.host, rank: l.rank ?? null, file: l.file })),
      };
      if (c.ok) {
        const bw =
          c.busBandwidthGBs !== undefined
            ? T('collectiveCheck.bandwidth', { gbs: round(c.busBandwidthGBs) })
            : '';
        return [
          out(
            'pass',
            T('collectiveCheck.pass', {
              launcher: c.launcher,
              backend: c.backend,
              world: c.worldSize,
              bw,
              // why this backend: gloo on CPU checks the launch and network, not HCCL
              why: c.notes.find((n) => /collective\.note\.(gloo|hccl)$/.test(n.key)) ?? '',
            }),
            ev,
            null,
          ),
        ];
      }
      return [
        out(
          'fail',
          T('collectiveCheck.fail', {
            launcher: c.launcher,
            backend: c.backend,
            error: c.error ?? T('collectiveCheck.noError'),
          }),
          ev,
          c.cause ? T('collectiveCheck.cause', { cause: c.cause.message, fix: c.cause.fix }) : null,
        ),
      ];
    },
  },
];

/** One issue's message, or all of them as sentences. */
const summarise = (issues: { message: Msg }[]): Msg =>
  issues.length === 1 ? issues[0]!.message : T('many', { list: issues.map((i) => i.message) });

const round = (x: number) => Math.round(x * 100) / 100;

/** IPv4 network of an address under its mask (`192.161.200.10` / `255.255.255.0` → `192.161.200.0`). */
export function subnet(address: string, netmask: string): string {
  const a = address.split('.').map(Number);
  const m = netmask.split('.').map(Number);
  if (a.length !== 4 || m.length !== 4) return address; // IPv6: compared whole
  return a.map((x, i) => x & m[i]!).join('.');
}

/**
 * The NIC HCCL_SOCKET_IFNAME selects (knowledge §1): `eth,enp` prefixes, `^eth` excluded prefixes,
 * `=eth0` exact names, `^=eth0` excluded exact names; the first match in name order wins.
 */
export function selectNic<N extends { name: string }>(spec: string, nics: N[]): N | undefined {
  const exclude = spec.startsWith('^');
  const body = exclude ? spec.slice(1) : spec;
  const exact = body.startsWith('=');
  const names = (exact ? body.slice(1) : body)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const hit = (n: string) => names.some((x) => (exact ? n === x : n.startsWith(x)));
  const sorted = [...nics].sort((a, b) => a.name.localeCompare(b.name));
  if (!exclude) return sorted.find((n) => hit(n.name));
  return sorted.find((n) => !hit(n.name) && n.name !== 'lo' && !n.name.startsWith('docker'));
}

/** Every fleet check's outcomes with their run-unique ids; a check that throws is an `error`. */
export function evaluateFleet(
  checks: FleetCheckDef[],
  facts: FleetFacts,
  rules: FleetRules,
): CheckOutcome[] {
  return checks.flatMap((def) => {
    try {
      return def.evaluate(facts, rules).map((o) => ({
        id: outcomeId(def.id, o.host, o.device),
        title: def.title,
        ...o,
      }));
    } catch (err) {
      return [
        {
          id: def.id,
          title: def.title,
          status: 'error' as const,
          summary: msg('sessions.checkCrashed', {
            message: err instanceof Error ? err.message : String(err),
          }),
          evidence: null,
          remediation: null,
        },
      ];
    }
  });
}

export { blockingRules, disagreements };
