import type { Inventory } from '../../../../shared/api';
import { msg, type Msg } from '../../../../shared/api/text';
import type { HostDistFacts, HostNic } from '../../../../shared/stages/distributed/api';
import { decodeProbe, parseInventory } from '../../hosts/inventory-parse';
import { summarise } from '../../hosts/repository';
import { deviceFacts, type HccnCall } from './hccn-parse';
import { reachAddress } from './reach-address';

const CMDS = new Set(['link', 'ip', 'net_health', 'netdetect', 'tls', 'optical', 'lldp', 'stat']);
const MAX = { env: 200, conf: 512, nics: 256, calls: 64 * 8 };

/** JSON of a section, or the fallback and a warning naming the section (never a throw). */
function json<T>(text: string | undefined, fallback: T, section: string, warnings: Msg[]): T {
  if (text === undefined) {
    warnings.push(msg('stage-distributed:facts.missing', { section }));
    return fallback;
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    warnings.push(
      msg('stage-distributed:facts.badJson', {
        section,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    return fallback;
  }
}

const str = (x: unknown, max = 4096): string => (typeof x === 'string' ? x.slice(0, max) : '');

/** `key=value` lines of /etc/hccn.conf (address_0=…, netmask_0=…, netdetect_0=…). */
export function parseHccnConf(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let n = 0;
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][\w.]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && n++ < MAX.conf) out[m[1]!] = m[2]!.slice(0, 256);
  }
  return out;
}

/** A host that did not answer: only its name and why. */
export function unreachableHost(host: string, error: Msg): HostDistFacts {
  return {
    host,
    reachable: false,
    error,
    chip: null,
    npuCount: 0,
    cann: null,
    driver: null,
    firmware: null,
    address: null,
    hccnTool: null,
    devices: [],
    env: {},
    memlock: null,
    hccnConf: null,
    firewall: { tool: null, readable: false, blocking: [] },
    nics: [],
    warnings: [],
  };
}

/**
 * One host's facts from its probe's output (inventory + distributed sections). Every section is
 * read defensively: a missing or malformed one is a warning on the host, the rest still read.
 */
export function parseHostFacts(
  stdout: string,
  host: string,
  address: string,
  takenAt: string,
  blocking: (
    fw: { tool: string | null; rc: number; out: string },
    facts: HostDistFacts,
  ) => string[],
): { facts: HostDistFacts; inventory: Inventory } {
  const sections = decodeProbe(stdout, 'distributed');
  const inventory = parseInventory(stdout, host, takenAt);
  const sum = summarise(0, inventory);
  const warnings: Msg[] = [];
  const hccn = json<{ tool?: unknown; devices?: unknown; calls?: unknown }>(
    sections.dist_hccn?.out,
    {},
    'dist_hccn',
    warnings,
  );
  const calls: HccnCall[] = (Array.isArray(hccn.calls) ? hccn.calls : [])
    .slice(0, MAX.calls)
    .filter(
      (c): c is HccnCall =>
        !!c &&
        typeof c === 'object' &&
        Number.isInteger((c as HccnCall).dev) &&
        CMDS.has((c as HccnCall).cmd) &&
        typeof (c as HccnCall).rc === 'number',
    )
    .map((c) => ({ ...c, out: str(c.out, 16384) }));
  const ids = (Array.isArray(hccn.devices) ? hccn.devices : [])
    .filter((d): d is number => Number.isInteger(d) && d >= 0 && d < 64)
    .slice(0, 64);
  const envRaw = json<Record<string, unknown>>(sections.dist_env?.out, {}, 'dist_env', warnings);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(envRaw ?? {}).slice(0, MAX.env))
    if (/^[A-Z_][A-Z0-9_]*$/.test(k)) env[k] = str(v, 1024);
  const nicsRaw = json<unknown[]>(sections.dist_nics?.out, [], 'dist_nics', warnings);
  const nics: HostNic[] = (Array.isArray(nicsRaw) ? nicsRaw : [])
    .slice(0, MAX.nics)
    .filter((n): n is HostNic => !!n && typeof (n as HostNic).name === 'string')
    .map((n) => ({
      name: str(n.name, 64),
      up: n.up === true,
      addresses: (Array.isArray(n.addresses) ? n.addresses : [])
        .map((a) => str(a, 64))
        .slice(0, 16),
    }));
  const fwRaw = json<{ tool?: unknown; rc?: unknown; out?: unknown }>(
    sections.dist_firewall?.out,
    {},
    'dist_firewall',
    warnings,
  );
  const fw = {
    tool: (fwRaw.tool === 'nft' || fwRaw.tool === 'iptables' ? fwRaw.tool : null) as
      'nft' | 'iptables' | null,
    rc: typeof fwRaw.rc === 'number' ? fwRaw.rc : 127,
    out: str(fwRaw.out, 65536),
  };
  const memlock = sections.dist_memlock?.out.trim() ?? null;
  const conf = sections.dist_hccn_conf;
  const facts: HostDistFacts = {
    host,
    reachable: true,
    error: null,
    chip: sum.chip,
    npuCount: Math.max(sum.chipCount, ids.length),
    cann: sum.cann,
    driver: sum.driver,
    firmware: sum.firmware,
    address: reachAddress(env, str(sections.dist_ssh?.out, 256), address, nics),
    hccnTool: typeof hccn.tool === 'string' ? hccn.tool.slice(0, 512) : null,
    devices: ids.map((id) => deviceFacts(id, calls)),
    env,
    memlock: memlock && /^(unlimited|\d+)$/.test(memlock) ? memlock : null,
    hccnConf: conf && conf.rc === 0 ? parseHccnConf(conf.out) : null,
    firewall: {
      tool: fw.tool,
      readable: fw.tool === null || fw.rc === 0,
      blocking: [],
    },
    nics,
    warnings,
  };
  facts.firewall.blocking = fw.rc === 0 ? blocking(fw, facts) : [];
  return { facts, inventory };
}
