import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../../../../shared/api';
import type { DeviceFacts, HostDistFacts } from '../../../../shared/stages/distributed/api';
import { translator } from '../../../../shared/i18n';
import { renderText } from '../../../../shared/i18n';
import { STAGE_NAMESPACES } from '../../../../shared/stages';
import { FLEET_CHECKS, evaluateFleet, selectNic, type FleetFacts } from './checks';
import { blockingRules } from './firewall';
import { disagreements } from './fleet';
import {
  deviceFacts,
  parseIp,
  parseLink,
  parseLldp,
  parseNetHealth,
  parseOptical,
  parseStat,
  parseTls,
} from './hccn-parse';
import { fleetRules, parseFleetRules } from './knowledge';
import { pingPlan } from './ping-plan';
import { reachAddress } from './reach-address';
import { parsePing, pingScript, splitPingOutput } from './ping';
import { checkRankTable, generateRankTable } from './rank-table';

const sample = (f: string) =>
  readFileSync(join(__dirname, '../../../../tests/fixtures/hccn-tool', f), 'utf8');
const t = translator('en', STAGE_NAMESPACES);
const show = (x: Parameters<typeof renderText>[2]) => renderText(t, 'en', x);
const rules = fleetRules();

describe('hccn_tool parsers on the knowledge’s real samples', () => {
  it('reads link, ip, net health, TLS, optics, LLDP and counters', () => {
    expect(parseLink(0, sample('link-up.txt'))).toEqual({ ok: true, value: 'UP' });
    expect(parseLink(0, sample('link-down.txt'))).toEqual({ ok: true, value: 'DOWN' });
    expect(parseIp(0, sample('ip-dev0.txt'))).toEqual({
      ok: true,
      value: { address: '192.161.200.10', netmask: '255.255.255.0' },
    });
    // an unconfigured device prints nothing: that is a fact (no address), not a parse error
    expect(parseIp(0, sample('ip-dev2-unconfigured.txt'))).toEqual({ ok: true, value: null });
    expect(parseNetHealth(0, sample('net-health-init.txt'))).toEqual({ ok: true, value: 'Init' });
    expect(parseNetHealth(0, sample('net-health-socket-failed.txt'))).toEqual({
      ok: true,
      value: 'Socket failed',
    });
    expect(parseTls(0, sample('tls-dev0-off.txt'))).toEqual({
      ok: true,
      value: { enabled: false, preconfigured: true, alarmDays: 60 },
    });
    expect(parseTls(0, sample('tls-dev1-on.txt'))).toMatchObject({ value: { enabled: true } });
    expect(parseTls(0, sample('tls-old-driver.txt'))).toEqual({
      ok: true,
      value: { enabled: false, preconfigured: null, alarmDays: 60 },
    });
    expect(parseTls(0, sample('tls-full.txt'))).toMatchObject({ value: { enabled: false } });
    // the fixture's Tx Power0 is above and Rx Power1 below the module's own thresholds
    expect(parseOptical(0, sample('optical.txt'))).toEqual({
      ok: true,
      value: {
        present: 'not present',
        outOfRange: ['Tx Power0 4.4035 > 3.5481', 'Rx Power1 0.0054 < 0.1445'],
      },
    });
    expect(parseLldp(0, sample('lldp-synthetic.txt'))).toEqual({
      ok: true,
      value: { port: 'eth0', system: 'switch-01' },
    });
    expect(parseStat(0, sample('stat.txt'))).toEqual({ ok: true, value: {} });
    expect(
      parseStat(0, 'packet statistics:\nroce_tx_err_pkt_num:12\nmac_rx_bad_pkt_num:3\n'),
    ).toEqual({ ok: true, value: { roce_tx_err_pkt_num: 12, mac_rx_bad_pkt_num: 3 } });
  });

  it('turns garbage, busy, failures and emptiness into a per-device message, never a value', () => {
    const cases = [
      parseLink(0, 'Segmentation fault\x1b[31m'),
      parseLink(0, 'hccn_tool is busy, please try again'),
      parseLink(255, 'dev 3 open failed'),
      parseLink(0, ''),
      parseTls(0, 'tls switch: maybe'),
      parseOptical(0, 'Control link unreachable'),
      parseIp(0, 'ipaddr 1.2.3.4'),
      parseStat(124, 'timed out after 15 s'),
    ];
    for (const c of cases) expect(c.ok).toBe(false);
    const text = cases.map((c) => (c.ok ? '' : show(c.problem)));
    expect(text[0]).toMatch(/printed something not understood: “Segmentation fault/);
    expect(text[1]).toMatch(/hccn_tool is busy/);
    expect(text[2]).toMatch(/exited with 255: “dev 3 open failed”/);
    expect(text[3]).toBe('printed nothing');
    expect(text[7]).toBe('did not finish in time');
    const d = deviceFacts(3, [
      { dev: 3, cmd: 'link', rc: 0, out: 'what is this' },
      { dev: 3, cmd: 'ip', rc: 0, out: sample('ip-dev1.txt') },
    ]);
    expect(d.link).toBeNull();
    expect(d.ip?.address).toBe('192.161.201.10');
    expect(d.problems.map((p) => p.getter)).toEqual(['link']);
  });
});

function dev(id: number, over: Partial<DeviceFacts> = {}): DeviceFacts {
  return {
    id,
    link: 'UP',
    ip: { address: `10.0.${id}.1`, netmask: '255.255.0.0' },
    netHealth: 'Success',
    netdetect: '10.0.0.254',
    tls: { enabled: false, preconfigured: true, alarmDays: 60 },
    optical: null,
    lldp: null,
    statErrors: {},
    problems: [],
    ...over,
  };
}

function host(name: string, n: number, over: Partial<HostDistFacts> = {}): HostDistFacts {
  const base = Number(name.replace(/\D/g, '')) || 0;
  return {
    host: name,
    reachable: true,
    error: null,
    chip: 'Ascend910B4',
    npuCount: n,
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    address: `192.168.0.${base + 1}`,
    hccnTool: '/usr/local/Ascend/driver/tools/hccn_tool',
    devices: Array.from({ length: n }, (_, i) =>
      dev(i, { ip: { address: `10.${base}.${i}.1`, netmask: '255.255.0.0' } }),
    ),
    env: { HCCL_CONNECT_TIMEOUT: '600' },
    memlock: 'unlimited',
    hccnConf: null,
    firewall: { tool: null, readable: true, blocking: [] },
    nics: [{ name: 'eth0', up: true, addresses: [`192.168.0.${base + 1}`] }],
    warnings: [],
    ...over,
  };
}

const facts = (hosts: HostDistFacts[], over: Partial<FleetFacts> = {}): FleetFacts => ({
  hosts,
  rankTable: generateRankTable(hosts),
  collective: null,
  collectiveState: 'off',
  blockedHosts: 0,
  ...over,
});

const run = (f: FleetFacts) => evaluateFleet(FLEET_CHECKS, f, rules);
const find = (out: CheckOutcome[], id: string) => out.find((o) => o.id === id);

describe('fleet checks', () => {
  it('a healthy pair of hosts passes everything, each outcome naming its host and device', () => {
    const out = run(facts([host('n1', 2), host('n2', 2)]));
    expect(out.filter((o) => o.status !== 'pass' && o.status !== 'skip')).toEqual([]);
    const link = find(out, 'dist.link@n2#1')!;
    expect(link).toMatchObject({ host: 'n2', device: 1, status: 'pass' });
    expect(show(link.summary)).toBe('NPU 1: link UP.');
    expect(find(out, 'dist.rank-table')!.status).toBe('pass');
  });

  it('a device link DOWN fails that device only; net health not Success fails; Init warns', () => {
    const a = host('n1', 2);
    a.devices[1]!.link = 'DOWN';
    a.devices[0]!.netHealth = 'Init';
    const b = host('n2', 2);
    b.devices[0]!.netHealth = 'Socket failed';
    const out = run(facts([a, b]));
    expect(find(out, 'dist.link@n1#1')!.status).toBe('fail');
    expect(find(out, 'dist.link@n1#0')!.status).toBe('pass');
    expect(show(find(out, 'dist.link@n1#1')!.remediation)).toMatch(/hccn_tool -i 1 -link_stat -g/);
    expect(find(out, 'dist.health@n1#0')!.status).toBe('warn');
    const sock = find(out, 'dist.health@n2#0')!;
    expect(sock.status).toBe('fail');
    expect(show(sock.summary)).toBe('NPU 0: net health Socket failed (probing 10.0.0.254).');
  });

  it('a TLS switch that differs fails on the odd host with both values shown', () => {
    const on = host('n3', 2, {
      devices: [0, 1].map((i) =>
        dev(i, {
          ip: { address: `10.3.${i}.1`, netmask: '255.255.0.0' },
          tls: { enabled: true, preconfigured: true, alarmDays: 60 },
        }),
      ),
    });
    const out = run(facts([host('n1', 2), host('n2', 2), on]));
    const tls = find(out, 'dist.tls@n3')!;
    expect(tls.status).toBe('fail');
    expect(show(tls.summary)).toMatch(/TLS switch here: on; most of the fleet: off/);
    expect(find(out, 'dist.tls@n1')!.status).toBe('pass');
    const d = disagreements([host('n1', 2), host('n2', 2), on], rules);
    expect(d.find((x) => x.item === 'tls')!.values).toEqual([
      { host: 'n1', value: '0' },
      { host: 'n2', value: '0' },
      { host: 'n3', value: '1' },
    ]);
  });

  it('unconfigured, duplicated and wrongly-subnetted device IPs (910A pairs) fail', () => {
    const a = host('n1', 8, { chip: 'Ascend910A' });
    // 910A: 0/4 must share a subnet, 0-3 must not
    a.devices.forEach(
      (d, i) => (d.ip = { address: `192.168.${i % 4}.${10 + i}`, netmask: '255.255.255.0' }),
    );
    a.devices[5]!.ip = { address: '192.168.9.15', netmask: '255.255.255.0' }; // 1/5 split
    a.devices[6]!.ip = null; // unconfigured
    const b = host('n2', 2);
    b.devices[0]!.ip = { address: '192.168.0.10', netmask: '255.255.255.0' }; // = n1 NPU 0
    const out = run(facts([a, b]));
    expect(find(out, 'dist.ip@n1#6')!.status).toBe('fail');
    expect(show(find(out, 'dist.ip@n1#6')!.summary)).toBe('NPU 6: no IP address configured.');
    expect(show(find(out, 'dist.ip@n2#0')!.summary)).toMatch(/is also the address of n1\/NPU 0/);
    expect(show(find(out, 'dist.ip@n1#5')!.summary)).toMatch(/not in the same subnet as NPU 1/);
    expect(find(out, 'dist.ip@n1#2')!.status).toBe('pass');
    // the rank table cannot be generated while an NPU has no address
    expect(find(out, 'dist.rank-table')!.status).toBe('warn');
  });

  it('versions and HCCL settings that differ are shown with each value; timeouts scale with ranks', () => {
    const odd = host('n2', 8, {
      cann: '8.0.RC2',
      env: { HCCL_CONNECT_TIMEOUT: '600', HCCL_BUFFSIZE: '400' },
    });
    const out = run(facts([host('n1', 8), odd, host('n3', 8)]));
    expect(show(find(out, 'dist.versions@n2')!.summary)).toBe(
      'CANN here: 8.0.RC2; most of the fleet: 8.1.RC1.',
    );
    expect(find(out, 'dist.versions@n2')!.status).toBe('fail');
    const env = find(out, 'dist.env@n2')!;
    expect(show(env.summary)).toBe('HCCL_BUFFSIZE here: 400; most of the fleet: not set.');
    expect(env.status).toBe('fail'); // a buffer size that differs between ranks: must match
    expect(find(out, 'dist.env@n1')!.status).toBe('pass');
    // 3 hosts x 8 NPUs: 120 s would do; 400 hosts x 8 (3200 ranks) need 240 s
    const big = Array.from({ length: 400 }, (_, i) => host(`h${i}`, 8, { env: {} }));
    const t = run(facts(big)).find((o) => o.id === 'dist.timeout@h0')!;
    expect(t.status).toBe('warn');
    expect(show(t.summary)).toMatch(/120 \(default\) s is short for 3200 ranks: at least 240 s/);
  });

  it('memlock, firewall rules, and the NIC HCCL_SOCKET_IFNAME names', () => {
    const ports = [
      { from: 60000, to: 60031 },
      { from: 16666, to: 16666 },
    ];
    expect(
      blockingRules(
        'iptables',
        '-P INPUT ACCEPT\n-A INPUT -p tcp -m tcp --dport 60000:60031 -j DROP\n',
        ports,
      ),
    ).toHaveLength(1);
    expect(
      blockingRules('iptables', '-P INPUT DROP\n-A INPUT -p tcp --dport 22 -j ACCEPT\n', ports),
    ).toEqual(['-P INPUT DROP']);
    expect(
      blockingRules(
        'iptables',
        '-P INPUT DROP\n-A INPUT -p tcp --dport 60000:60031 -j ACCEPT\n-A INPUT -p tcp --dport 16666 -j ACCEPT\n',
        ports,
      ),
    ).toEqual([]);
    const nft =
      'table inet filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\ttcp dport { 60000-60015, 16666 } drop\n\t}\n}\n';
    expect(blockingRules('nft', nft, ports)).toEqual(['tcp dport { 60000-60015, 16666 } drop']);
    expect(
      blockingRules(
        'nft',
        'table inet filter {\n chain output {\n  tcp dport 60000 drop\n }\n}',
        ports,
      ),
    ).toEqual([]);

    const nics = [
      { name: 'docker0', up: true, addresses: [] },
      { name: 'enp3s0', up: false, addresses: ['10.1.1.1'] },
      { name: 'eth0', up: true, addresses: ['10.2.2.2'] },
      { name: 'lo', up: true, addresses: ['127.0.0.1'] },
    ];
    expect(selectNic('eth,enp', nics)?.name).toBe('enp3s0');
    expect(selectNic('=eth0', nics)?.name).toBe('eth0');
    expect(selectNic('^enp', nics)?.name).toBe('eth0');
    expect(selectNic('^=eth0', nics)?.name).toBe('enp3s0');
    expect(selectNic('ib', nics)).toBeUndefined();
    const a = host('n1', 1, { memlock: '64', env: { HCCL_SOCKET_IFNAME: 'enp' }, nics });
    const b = host('n2', 1, {
      env: { HCCL_SOCKET_IFNAME: 'ib0' },
      firewall: { tool: 'iptables', readable: false, blocking: [] },
    });
    const out = run(facts([a, b]));
    expect(show(find(out, 'dist.memlock@n1')!.summary)).toMatch(
      /ulimit -l: 64 KiB, below 65536 KiB/,
    );
    expect(show(find(out, 'dist.nic@n1')!.summary)).toBe(
      'HCCL_SOCKET_IFNAME=enp selects enp3s0, which is down.',
    );
    expect(show(find(out, 'dist.nic@n2')!.summary)).toMatch(
      /HCCL_SOCKET_IFNAME=ib0 matches no NIC of this host/,
    );
    expect(find(out, 'dist.firewall@n2')!.status).toBe('warn');
  });

  it('a host whose probe had no distributed sections (no python3) says so, not “no hccn_tool”', () => {
    const bare = host('n2', 8, {
      hccnTool: null,
      devices: [],
      warnings: [{ key: 'stage-distributed:facts.missing', params: { section: 'dist_hccn' } }],
    });
    const out = run(facts([host('n1', 8), bare]));
    expect(find(out, 'dist.hccn@n2')!.status).toBe('warn');
    expect(show(find(out, 'dist.hccn@n2')!.summary)).toMatch(/section is missing \(python3 absent/);
  });

  it('a host without NPUs skips “hccn_tool readable” (not applicable), with or without the tool', () => {
    const noTool = host('n2', 0, { hccnTool: null, chip: null });
    const toolOnly = host('n3', 0, { chip: null });
    const out = run(facts([noTool, toolOnly]));
    for (const id of ['dist.hccn@n2', 'dist.hccn@n3']) {
      expect(find(out, id)!.status, id).toBe('skip');
      expect(show(find(out, id)!.summary), id).toMatch(/No NPU|no NPU/);
    }
  });

  it('a host that never answered fails only its reach check; the others are still checked', () => {
    const gone = host('n9', 0, {
      reachable: false,
      error: { key: 'stage-distributed:reach.timeout', params: { seconds: 30 } },
    });
    const out = run(facts([host('n1', 1), gone], { collectiveState: 'blocked', blockedHosts: 1 }));
    expect(show(find(out, 'dist.reach@n9')!.summary)).toBe(
      'Did not answer: No answer within 30 s; the other hosts were still checked.',
    );
    expect(out.filter((o) => o.host === 'n9').map((o) => o.id)).toEqual(['dist.reach@n9']);
    expect(find(out, 'dist.link@n1#0')!.status).toBe('pass');
    expect(show(find(out, 'dist.collective')!.summary)).toBe(
      'Not run: n9 did not answer (1 of the run’s hosts); a collective needs every host, the others were still checked.',
    );
  });
});

/** A rank table as the tests edit it (plain JSON: every value a string, or a mistake). */
interface Table {
  version: string;
  server_count?: string;
  server_list: { server_id: string; device: Record<string, unknown>[] }[];
  super_pod_list?: unknown[];
}

describe('rank tables', () => {
  const hosts = [host('node_0', 2), host('node_1', 2)];
  const v10 = (over: (doc: Table) => void = () => undefined) => {
    const doc = JSON.parse(JSON.stringify(generateRankTable(hosts).doc)) as Table;
    over(doc);
    return JSON.stringify(doc, null, 2);
  };
  const problems = (text: string) =>
    checkRankTable(text, 'hccl.json', hosts, {}).problems.map(
      (p) => `${p.path}: ${show(p.message)}`,
    );

  it('a generated v1.0 table is consistent with the hosts it came from', () => {
    const g = generateRankTable(hosts);
    expect(g.ranks).toBe(4);
    expect(g.doc).toMatchObject({ version: '1.0', server_count: '2', status: 'completed' });
    expect(problems(v10())).toEqual([]);
  });

  it('names what is wrong: not JSON (line, column), unknown version, ids, IPs, ranks', () => {
    const notJson = problems('{\n  "version": "1.0",\n  "server_list": [,]\n}');
    expect(notJson).toHaveLength(1);
    expect(notJson[0]).toMatch(/^: Not JSON: .* \(line 3, column 19\)\.$/);
    expect(problems('')[0]).toMatch(/\(line 1, column 1\)/);
    expect(problems('[1,2]')).toEqual([': The rank table is not a JSON object.']);
    expect(problems('{"version":"1.1","server_list":[]}')).toEqual([
      'version: Unknown rank table version “1.1”: versions 1.0 and 1.2 are checked.',
    ]);
    expect(
      problems(
        v10((d) => {
          d.server_list[1]!.server_id = 'node_7';
          d.server_list[0]!.device[1]!.device_id = '9';
          d.server_list[0]!.device[0]!.device_ip = '10.99.0.1';
          d.server_list[1]!.device[0]!.rank_id = '3';
          d.server_list[1]!.device[1]!.rank_id = 5;
        }),
      ),
    ).toEqual([
      'server_list[0].device[0].device_ip: device_ip 10.99.0.1 is not the address of NPU 0 on node_0 (10.0.0.1).',
      'server_list[0].device[1].device_id: device_id 9 does not exist on node_0 (it has 2 NPUs).',
      'server_list[1].server_id: server_id “node_7” is none of the selected hosts (by name, hostname or address).',
      'server_list[1].device[1].rank_id: server_list[1].device[1].rank_id must be a string (every value of a rank table is one).',
      'server_list: rank_id values are not 0…2: missing 2.',
      'server_list: Host node_1 is selected but not in the rank table.',
    ]);
    expect(
      problems(
        v10((d) => {
          d.server_list[0]!.device[1]!.rank_id = '2';
          d.server_list[1]!.device[0]!.rank_id = '1';
          d.server_list[1]!.device[1]!.device_ip = d.server_list[1]!.device[0]!.device_ip;
        }),
      ),
    ).toEqual([
      'server_list[1].device[1].device_ip: device_ip 10.1.0.1 is used twice.',
      'server_list[1].device[1].device_ip: device_ip 10.1.0.1 is not the address of NPU 1 on node_1 (10.1.1.1).',
      'server_list: The ranks of 192.168.0.1 are not one contiguous block (ranks must not interleave across servers).',
      'server_list: The ranks of 192.168.0.2 are not one contiguous block (ranks must not interleave across servers).',
    ]);
  });

  it('checks a v1.2 table’s super pods (EI0014) and refuses 2.0 as unchecked', () => {
    const doc = JSON.parse(v10()) as Table;
    doc.version = '1.2';
    delete doc.server_count;
    doc.server_list.forEach((s) => s.device.forEach((d) => (d.super_device_id = d.device_id)));
    doc.super_pod_list = [
      {
        super_pod_id: '0',
        server_list: [{ server_id: '192.168.0.1' }, { server_id: '192.168.0.2' }],
      },
      { super_pod_id: '1', server_list: [{ server_id: 'node_9' }] },
    ];
    expect(problems(JSON.stringify(doc))).toEqual([
      'super_pod_list[0]: super_device_id 0 is used twice in super pod 0 (EI0014).',
      'super_pod_list[0]: super_device_id 1 is used twice in super pod 0 (EI0014).',
      'super_pod_list[1].server_list[0]: super_pod_list names server “node_9”, which is not in server_list.',
    ]);
    expect(problems('{"version":"2.0","rank_list":[]}')).toEqual([
      'version: Version 2.0 (Atlas 950 SuperPoD) is not checked here.',
    ]);
  });
});

describe('knowledge and sampling', () => {
  it('loads the fleet rules with their sources, and refuses a broken file naming the field', () => {
    expect(rules.connectTimeout.byRanks.map((s) => s.seconds)).toEqual([120, 240, 600]);
    const text = readFileSync(
      join(__dirname, '../../../../resources/knowledge/distributed/fleet-rules.json'),
      'utf8',
    );
    const broken = JSON.parse(text);
    broken.ports.npu = 'sixteen';
    expect(() => parseFleetRules(JSON.stringify(broken), 'fleet-rules.json')).toThrow(
      /fleet-rules\.json is not valid: ports\.npu/,
    );
    expect(() => parseFleetRules('{', 'fleet-rules.json')).toThrow(/is not JSON/);
  });

  it('pings all cross-host pairs up to 16 NPUs, then a ring plus the same seeded samples', () => {
    const small = pingPlan(
      [
        { host: 'a', devices: [0, 1] },
        { host: 'b', devices: [0, 1] },
      ],
      rules,
    );
    expect(small).toMatchObject({ rule: 'all-pairs', pairs: 8, devices: 4 });
    expect(small.list.every((p) => p.from.host !== p.to.host)).toBe(true);
    const fleet = Array.from({ length: 128 }, (_, i) => ({
      host: `h${i}`,
      devices: Array.from({ length: 16 }, (_, d) => d),
    }));
    const big = pingPlan(fleet, rules);
    expect(big.rule).toBe('ring-sampled');
    expect(big.pairs).toBe(128 * 16 + 32);
    expect(big.list[0]).toEqual({ from: { host: 'h0', device: 0 }, to: { host: 'h1', device: 0 } });
    expect(big.list[128 * 16 - 1]!.to.host).toBe('h0'); // the ring wraps
    expect(pingPlan(fleet, rules).list).toEqual(big.list);
  });
});

describe('NPU-to-NPU pings', () => {
  it('reads both builds’ loss lines (the knowledge’s samples) and refuses anything else', () => {
    const ok =
      'device 0 PING 10.10.100.10\nrecv seq=0,time=0.067000ms\nrecv seq=1,time-0.049000ms\nrecv seq=2,time=0.047000ms\n3 packets transmitted, 3 received, 0.00% packet loss';
    expect(parsePing(0, ok)).toEqual({ lossPct: 0 });
    const lossy =
      'recv time out seq=O\nrecv seq=1,time=0.097000ms\nrecv seq=2,time=0.066000ms\n3 packets transmitted, 2 received, 33.33% packet loss';
    expect(parsePing(0, lossy)).toEqual({ lossPct: 33.33 });
    expect(parsePing(0, '3 packets transmitted, 0 received, 100.00% packets loss')).toEqual({
      lossPct: 100,
    });
    const bad = parsePing(1, 'Command or option is not found.');
    expect('problem' in bad && show(bad.problem)).toBe(
      'exited with 1: “Command or option is not found.”',
    );
  });

  it('builds one serial script whose every command is quoted, and sends no address it cannot trust', () => {
    const { script, skipped } = pingScript('/usr/local/Ascend/driver/tools/hccn_tool', [
      { device: 0, address: '192.51.0.10' },
      { device: 1, address: '1.2.3.4; rm -rf ~' },
      { device: 2, address: '$(reboot)' },
    ]);
    expect(skipped).toEqual([1, 2]);
    expect(script).toContain(
      'run_ping to /usr/local/Ascend/driver/tools/hccn_tool -i 0 -ping -g address 192.51.0.10',
    );
    expect(script).not.toMatch(/rm -rf|reboot/);
    // a tool path the host reported that is not the driver's own is not run: PATH's hccn_tool is
    expect(pingScript('/tmp/x;evil', [{ device: 0, address: '10.0.0.1' }]).script).toContain(
      'run_ping to hccn_tool -i 0',
    );
    const parts = splitPingOutput(
      '@@AMW-PING@@ 0\n3 packets transmitted, 3 received, 0.00% packet loss\n@@AMW-RC@@ 0\n@@AMW-PING@@ 3\nboom\n@@AMW-RC@@ 7\n',
    );
    expect(parts.get(0)).toEqual({
      rc: 0,
      out: '3 packets transmitted, 3 received, 0.00% packet loss',
    });
    expect(parts.get(3)).toEqual({ rc: 7, out: 'boom' });
  });

  it('a ping with loss fails its source host, naming both ends', () => {
    const hosts = [host('n1', 1), host('n2', 1)];
    const out = run(
      facts(hosts, {
        pingPlan: { rule: 'all-pairs', pairs: 2, devices: 2 },
        pings: [
          {
            from: { host: 'n1', device: 0 },
            to: { host: 'n2', device: 0, address: '10.2.0.1' },
            lossPct: 100,
            problem: null,
          },
          {
            from: { host: 'n2', device: 0 },
            to: { host: 'n1', device: 0, address: '10.1.0.1' },
            lossPct: 0,
            problem: null,
          },
        ],
      }),
    );
    expect(find(out, 'dist.ping@n1')!.status).toBe('fail');
    expect(show(find(out, 'dist.ping@n1')!.summary)).toBe(
      'NPU 0 → n2 NPU 0 (10.2.0.1): 100% loss.',
    );
    expect(show(find(out, 'dist.ping@n2')!.summary)).toMatch(/^1 pings from this host/);
  });
});

describe('the address the other hosts reach a host on', () => {
  const nics = [
    { name: 'lo', up: true, addresses: ['127.0.0.1'] },
    { name: 'docker0', up: false, addresses: ['172.17.0.1'] },
    { name: 'eth0', up: true, addresses: ['10.20.0.5', 'fe80::1'] },
    { name: 'ib0', up: true, addresses: ['169.254.3.3', '10.30.0.5'] },
  ];
  it('HCCL_IF_IP wins; else the host’s end of our SSH session; never an ssh_config alias', () => {
    expect(
      reachAddress({ HCCL_IF_IP: '10.30.0.5' }, '10.0.0.9 5122 10.20.0.5 22', 'n1', nics),
    ).toBe('10.30.0.5');
    // registered as an alias only this workstation resolves: the SSH server address is the host's
    expect(reachAddress({}, '10.0.0.9 5122 10.30.0.5 22', 'gpu-a', nics)).toBe('10.30.0.5');
    // no $SSH_CONNECTION (a jump proxy's own shell): the first IPv4 of an up NIC, not loopback
    expect(reachAddress({}, '', 'gpu-a', nics)).toBe('10.20.0.5');
    // a registered IP the host really carries is kept
    expect(reachAddress({}, '', '10.30.0.5', nics)).toBe('10.30.0.5');
  });
  it('loopback only when the host has nothing else; the registered name as the last resort', () => {
    const lo = [{ name: 'lo', up: true, addresses: ['127.0.0.1'] }];
    expect(reachAddress({}, '127.0.0.1 40000 127.0.0.1 2222', 'sim-a', lo)).toBe('127.0.0.1');
    expect(reachAddress({ HCCL_IF_IP: 'not-an-ip' }, 'garbage', 'sim-a', [])).toBe('sim-a');
  });
});
