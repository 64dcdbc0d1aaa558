import { msg, type MsgParam } from '../../../../shared/api/text';
import type {
  HostDistFacts,
  RankTableProblem,
  RankTableReport,
} from '../../../../shared/stages/distributed/api';
import { jsonErrorOffset, lineColumn } from './json-where';

/**
 * Rank tables (hccl.json) v1.0 and v1.2, checked statically against what the hosts reported, by
 * the rules of ../shared/knowledge/ascend-distributed.md §3.1, §3.2 and §3.4 (what HCCL rejects),
 * and generated (v1.0) from the inventories when the user has none.
 */
const NS = 'stage-distributed:rankTable.';
const problem = (
  path: string,
  key: string,
  params?: Record<string, MsgParam>,
): RankTableProblem => ({
  path,
  message: msg(NS + key, params),
});

/** The names a host may go by in `server_id`: its name, SSH hostname, HCCL address, NIC addresses. */
export function hostAliases(h: HostDistFacts, hostname: string | null): string[] {
  return [
    h.host,
    ...(hostname ? [hostname] : []),
    ...(h.address ? [h.address] : []),
    ...h.nics.filter((n) => n.name !== 'lo').flatMap((n) => n.addresses),
  ];
}

const isObj = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const family = (ip: string) => (ip.includes(':') ? 'IPv6' : 'IPv4');

export function checkRankTable(
  text: string,
  file: string,
  hosts: HostDistFacts[],
  hostnames: Record<string, string>,
): RankTableReport {
  const report: RankTableReport = {
    source: 'given',
    file,
    version: null,
    ranks: 0,
    problems: [],
    doc: null,
  };
  const p = report.problems;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const at = jsonErrorOffset(text);
    const { line, column } = lineColumn(text, at < 0 ? text.length : at);
    p.push(
      problem('', 'notJson', {
        error: (err instanceof Error ? err.message : String(err))
          .replace(/\s+/g, ' ')
          .slice(0, 200),
        line,
        column,
      }),
    );
    return report;
  }
  if (!isObj(doc)) {
    p.push(problem('', 'notObject'));
    return report;
  }
  report.doc = doc;
  const version = doc.version;
  if (typeof version !== 'string') {
    p.push(
      problem('version', version === undefined ? 'missing' : 'notString', { field: 'version' }),
    );
    return report;
  }
  report.version = version;
  if (version === '2.0') {
    p.push(problem('version', 'v2'));
    return report;
  }
  if (version !== '1.0' && version !== '1.2') {
    p.push(problem('version', 'unknownVersion', { version: version.slice(0, 40) }));
    return report;
  }
  const strField = (o: Record<string, unknown>, key: string, path: string, required: boolean) => {
    const v = o[key];
    if (v === undefined) {
      if (required) p.push(problem(path, 'missing', { field: path }));
      return null;
    }
    if (typeof v !== 'string') {
      p.push(problem(path, 'notString', { field: path }));
      return null;
    }
    return v;
  };
  const intField = (o: Record<string, unknown>, key: string, path: string, max: number) => {
    const v = strField(o, key, path, true);
    if (v === null) return null;
    if (!/^\d{1,9}$/.test(v) || Number(v) > max) {
      p.push(problem(path, 'badNumber', { field: path, value: v.slice(0, 40) }));
      return null;
    }
    return Number(v);
  };
  const status = strField(doc, 'status', 'status', true);
  if (status !== null && status !== 'completed')
    p.push(problem('status', 'notCompleted', { status: status.slice(0, 40) }));
  const list = doc.server_list;
  if (!Array.isArray(list)) {
    p.push(problem('server_list', 'missing', { field: 'server_list' }));
    return report;
  }
  const count = strField(doc, 'server_count', 'server_count', version === '1.0');
  if (count !== null && count !== String(list.length))
    p.push(
      problem('server_count', 'serverCount', { count: count.slice(0, 20), actual: list.length }),
    );

  // a server_id is a host's name, or an address only one selected host has (simulated hosts on
  // one loopback address share theirs: the name is what tells them apart)
  const byAlias = new Map<string, HostDistFacts | null>();
  for (const h of hosts)
    for (const a of new Set(hostAliases(h, hostnames[h.host] ?? null).slice(1)))
      byAlias.set(a, byAlias.has(a) && byAlias.get(a) !== h ? null : h);
  for (const h of hosts) byAlias.set(h.host, h);
  const servers = new Set<string>();
  const seenHosts = new Set<string>();
  const ips = new Map<string, string>();
  const families = new Set<string>();
  const ranks: { rank: number; server: string; path: string }[] = [];
  const superDevices = new Map<string, string>(); // server_id -> its super_device_ids (joined)
  const superByServer = new Map<string, string[]>();
  list.forEach((server, si) => {
    const sp = `server_list[${si}]`;
    if (!isObj(server)) return p.push(problem(sp, 'notObject'));
    const id = strField(server, 'server_id', `${sp}.server_id`, true);
    if (id === null) return;
    if (servers.has(id))
      p.push(problem(`${sp}.server_id`, 'serverDuplicate', { id: id.slice(0, 80) }));
    servers.add(id);
    const host = byAlias.get(id) ?? undefined;
    if (!host) p.push(problem(`${sp}.server_id`, 'serverUnknown', { id: id.slice(0, 80) }));
    else seenHosts.add(host.host);
    const devices = server.device;
    if (!Array.isArray(devices))
      return p.push(problem(`${sp}.device`, 'missing', { field: `${sp}.device` }));
    const deviceIds = new Set<number>();
    const sdids: string[] = [];
    devices.forEach((device, di) => {
      const dp = `${sp}.device[${di}]`;
      if (!isObj(device)) return p.push(problem(dp, 'notObject'));
      report.ranks++;
      const dev = intField(device, 'device_id', `${dp}.device_id`, 63);
      if (dev !== null) {
        if (deviceIds.has(dev))
          p.push(
            problem(`${dp}.device_id`, 'deviceDuplicate', { id: dev, host: host?.host ?? id }),
          );
        deviceIds.add(dev);
        if (host && host.reachable && dev >= host.npuCount)
          p.push(
            problem(`${dp}.device_id`, 'deviceUnknown', {
              id: dev,
              host: host.host,
              count: host.npuCount,
            }),
          );
      }
      const ip = strField(device, 'device_ip', `${dp}.device_ip`, list.length > 1);
      if (ip !== null) {
        families.add(family(ip));
        if (ips.has(ip)) p.push(problem(`${dp}.device_ip`, 'ipDuplicate', { ip }));
        ips.set(ip, dp);
        const actual = host && dev !== null ? host.devices.find((d) => d.id === dev) : undefined;
        if (actual?.ip && actual.ip.address !== ip)
          p.push(
            problem(`${dp}.device_ip`, 'ipMismatch', {
              ip,
              device: dev,
              host: host!.host,
              actual: actual.ip.address,
            }),
          );
      }
      const rank = intField(device, 'rank_id', `${dp}.rank_id`, 1_000_000);
      if (rank !== null) ranks.push({ rank, server: id, path: `${dp}.rank_id` });
      if (version === '1.2') {
        const sd = strField(device, 'super_device_id', `${dp}.super_device_id`, false);
        if (sd !== null) sdids.push(sd);
      }
    });
    superByServer.set(id, sdids);
    superDevices.set(id, sdids.join(','));
  });
  if (families.size > 1) p.push(problem('server_list', 'ipFamily'));
  // rank ids: unique, 0..n-1, and one contiguous block per server
  const seenRanks = new Set<number>();
  for (const r of ranks) {
    if (seenRanks.has(r.rank)) p.push(problem(r.path, 'rankDuplicate', { rank: r.rank }));
    seenRanks.add(r.rank);
  }
  if (ranks.length) {
    const max = ranks.length - 1;
    const missing = Array.from({ length: ranks.length }, (_, i) => i).filter(
      (i) => !seenRanks.has(i),
    );
    if (missing.length)
      p.push(problem('server_list', 'rankGap', { max, missing: missing.slice(0, 10).join(', ') }));
    for (const server of servers) {
      const own = ranks
        .filter((r) => r.server === server)
        .map((r) => r.rank)
        .sort((a, b) => a - b);
      if (own.length && own[own.length - 1]! - own[0]! !== own.length - 1)
        p.push(problem('server_list', 'rankInterleaved', { server: server.slice(0, 80) }));
    }
  }
  if (version === '1.2' && Array.isArray(doc.super_pod_list)) {
    doc.super_pod_list.forEach((pod, pi) => {
      if (!isObj(pod) || !Array.isArray(pod.server_list)) return;
      const podId = typeof pod.super_pod_id === 'string' ? pod.super_pod_id : String(pi);
      const seen = new Set<string>();
      pod.server_list.forEach((s, k) => {
        const sid = isObj(s) && typeof s.server_id === 'string' ? s.server_id : null;
        if (sid === null || !servers.has(sid))
          return p.push(
            problem(`super_pod_list[${pi}].server_list[${k}]`, 'superPodServer', {
              id: (sid ?? '').slice(0, 80),
            }),
          );
        for (const sd of superByServer.get(sid) ?? []) {
          if (seen.has(sd))
            p.push(
              problem(`super_pod_list[${pi}]`, 'superDeviceDuplicate', {
                id: sd,
                pod: podId.slice(0, 40),
              }),
            );
          seen.add(sd);
        }
      });
    });
  }
  for (const h of hosts)
    if (!seenHosts.has(h.host) && h.npuCount > 0)
      p.push(problem('server_list', 'hostMissing', { host: h.host }));
  return report;
}

/**
 * A v1.0 table from the inventories: servers by their address (their name where hosts share one)
 * in lexicographic order (the order MindSpore's tutorial asks rank ids to follow), each NPU with its device IP, ranks 0..n-1 in
 * that order. Hosts without NPUs have no place in it; an NPU without an address makes it unusable.
 */
export function generateRankTable(hosts: HostDistFacts[]): RankTableReport & { missing: number } {
  const withNpus = hosts.filter((h) => h.reachable && h.devices.length > 0);
  const shared = (a: string | null) => withNpus.filter((h) => h.address === a).length > 1;
  const npuHosts = withNpus
    .map((h) => ({ h, id: h.address && !shared(h.address) ? h.address : h.host }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const missing = npuHosts.reduce((n, { h }) => n + h.devices.filter((d) => !d.ip).length, 0);
  let rank = 0;
  const serverList = npuHosts.map(({ h, id }) => ({
    server_id: id,
    device: h.devices.map((d) => ({
      device_id: String(d.id),
      device_ip: d.ip?.address ?? '',
      rank_id: String(rank++),
    })),
  }));
  return {
    source: 'generated',
    file: null,
    version: '1.0',
    ranks: rank,
    problems: [],
    missing,
    doc:
      missing || !serverList.length
        ? null
        : {
            status: 'completed',
            version: '1.0',
            server_count: String(serverList.length),
            server_list: serverList,
          },
  };
}
