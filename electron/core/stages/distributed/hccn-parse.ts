import type { Msg } from '../../../../shared/api/text';
import { msg } from '../../../../shared/api/text';
import type { DeviceFacts } from '../../../../shared/stages/distributed/api';

/**
 * Parsers of `hccn_tool -i N -<getter> -g` output, on the formats quoted in
 * ../shared/knowledge/ascend-distributed.md §2 (source printf strings and real samples). Each
 * returns a value or a per-device problem naming what was printed — never a guess.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: Msg };

const NS = 'stage-distributed:parse.';
const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (key: string, params?: Record<string, string | number>): Parsed<never> => ({
  ok: false,
  problem: msg(NS + key, params),
});

/** The first line of unknown output, bounded, for the message (escaped where shown). */
export const excerpt = (out: string): string => {
  const line = out.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}…` : line.trim();
};

/** What every getter may answer instead of its format: busy, unsupported, a failure, a timeout. */
function common(rc: number, out: string): Parsed<never> | null {
  if (/hccn_tool is busy/i.test(out)) return bad('busy');
  if (/not support/i.test(out)) return bad('unsupported');
  if (rc === 124) return bad('timedOut');
  if (rc !== 0) return bad('failed', { rc, text: excerpt(out) });
  return null;
}

/** `-link -g`: exactly `link status: UP|DOWN` (tool_ops.c). */
export function parseLink(rc: number, out: string): Parsed<'UP' | 'DOWN'> {
  const m = /^\s*link status:\s*(UP|DOWN)\s*$/im.exec(out);
  if (m) return ok(m[1]!.toUpperCase() as 'UP' | 'DOWN');
  return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
}

/** `-ip -g`: `ipaddr:…` / `netmask:…`; empty output is an unconfigured device (§2.1), not an error. */
export function parseIp(
  rc: number,
  out: string,
): Parsed<{ address: string; netmask: string } | null> {
  const addr = /^\s*ipaddr\s*:\s*(\S+)\s*$/im.exec(out);
  const mask = /^\s*netmask\s*:\s*(\S+)\s*$/im.exec(out);
  if (addr && mask) return ok({ address: addr[1]!, netmask: mask[1]! });
  const c = common(rc, out);
  if (c) return c;
  if (!out.trim()) return ok(null);
  return bad('unknown', { text: excerpt(out) });
}

/** `-net_health -g`: `net health status: <str>` (the source's table, or a build's variant). */
export function parseNetHealth(rc: number, out: string): Parsed<string> {
  const m = /^\s*net health status:\s*(.+?)\s*$/im.exec(out);
  if (m) return ok(m[1]!);
  return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
}

/** `-netdetect -g`: `netdetect addr: <ip>` (empty value: not set). */
export function parseNetdetect(rc: number, out: string): Parsed<string> {
  const m = /^\s*netdetect addr(?:ess)?\s*:\s*(\S*)\s*$/im.exec(out);
  if (m) return ok(m[1]!);
  return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
}

/** `-tls -g`: `dev_id:N, tls switch[0|1](…), [tls preconfigured[0|1](…),] tls alarm time threshold[N]days`. */
export function parseTls(rc: number, out: string): Parsed<NonNullable<DeviceFacts['tls']>> {
  const sw = /tls switch\s*\[([01])\]/i.exec(out);
  if (sw) {
    const pre = /tls preconfigured\s*\[([01])\]/i.exec(out);
    const alarm = /alarm time threshold\s*\[(\d+)\]/i.exec(out);
    return ok({
      enabled: sw[1] === '1',
      preconfigured: pre ? pre[1] === '1' : null,
      alarmDays: alarm ? Number(alarm[1]) : null,
    });
  }
  return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
}

const num = (s: string | undefined): number | null => {
  const m = s ? /^\s*(-?\d+(?:\.\d+)?)/.exec(s) : null;
  return m ? Number(m[1]) : null;
};

/**
 * `-optical -g`: `key : value unit` lines. Compared with the module's own printed thresholds
 * (Tx/Rx power per lane, Vcc, temperature) — the knowledge's safer rule; LOS/LoL flags are not
 * judged (their bits are undocumented).
 */
export function parseOptical(rc: number, out: string): Parsed<NonNullable<DeviceFacts['optical']>> {
  if (/control link unreachable/i.test(out)) return bad('unknown', { text: excerpt(out) });
  const kv = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^\s*([A-Za-z][\w .+/-]*?)\s*:\s*(.*?)\s*$/.exec(line);
    if (m) kv.set(m[1]!.toLowerCase(), m[2]!);
  }
  if (!kv.size || !kv.has('present'))
    return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
  const outOfRange: string[] = [];
  const within = (name: string, value: number | null, lo: string, hi: string) => {
    const low = num(kv.get(lo));
    const high = num(kv.get(hi));
    if (value === null) return;
    if (low !== null && value < low) outOfRange.push(`${name} ${value} < ${low}`);
    else if (high !== null && value > high) outOfRange.push(`${name} ${value} > ${high}`);
  };
  within('Vcc', num(kv.get('vcc')), 'vcc low thres', 'vcc high thres');
  within('temperature', num(kv.get('temperature')), 'temp low thres', 'temp high thres');
  for (const [key, value] of kv) {
    const tx = /^tx power(\d+)$/.exec(key);
    const rx = /^rx power(\d+)$/.exec(key);
    if (tx) within(`Tx Power${tx[1]}`, num(value), 'txpower low thres', 'txpower high thres');
    if (rx) within(`Rx Power${rx[1]}`, num(value), 'rxpower low thres', 'rxpower high thres');
  }
  return ok({ present: kv.get('present') ?? null, outOfRange });
}

/** `-lldp -g`: lldptool-style TLVs; the switch port (`Ifname:` after `Port ID TLV`) and name. */
export function parseLldp(rc: number, out: string): Parsed<NonNullable<DeviceFacts['lldp']>> {
  const lines = out.split('\n').map((l) => l.trim());
  const after = (tlv: string): string | null => {
    const i = lines.findIndex((l) => l.toLowerCase() === tlv.toLowerCase());
    return i >= 0 && lines[i + 1] ? lines[i + 1]! : null;
  };
  const port = after('Port ID TLV');
  const system = after('System Name TLV');
  if (port || system) return ok({ port: port ? port.replace(/^Ifname:\s*/i, '') : null, system });
  return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
}

/** Counters of `-stat -g` whose growth means trouble (RoCE retransmits, bad packets). */
const ERROR_COUNTER = /(_err_|_err$|bad_pkt|bad_oct|qp_status_err|verification_err|out_of_order)/;

/** `-stat -g`: `packet statistics:` then `key:value` lines; the error counters that are not zero. */
export function parseStat(rc: number, out: string): Parsed<Record<string, number>> {
  const counters: Record<string, number> = {};
  let seen = 0;
  for (const line of out.split('\n')) {
    const m = /^\s*(\w+)\s*:\s*(\d+)\s*$/.exec(line);
    if (!m) continue;
    seen++;
    if (ERROR_COUNTER.test(m[1]!) && Number(m[2]) > 0) counters[m[1]!] = Number(m[2]);
  }
  if (seen) return ok(counters);
  return common(rc, out) ?? (out.trim() ? bad('unknown', { text: excerpt(out) }) : bad('empty'));
}

/** One `hccn_tool` call as the probe ran it. */
export interface HccnCall {
  dev: number;
  cmd: 'link' | 'ip' | 'net_health' | 'netdetect' | 'tls' | 'optical' | 'lldp' | 'stat';
  rc: number;
  out: string;
}

/** A device's facts from its calls; a getter that was not run leaves its field null, silently. */
export function deviceFacts(id: number, calls: HccnCall[]): DeviceFacts {
  const d: DeviceFacts = {
    id,
    link: null,
    ip: null,
    netHealth: null,
    netdetect: null,
    tls: null,
    optical: null,
    lldp: null,
    statErrors: null,
    problems: [],
  };
  const take = <T>(getter: string, p: Parsed<T>, set: (v: T) => void) => {
    if (p.ok) set(p.value);
    else d.problems.push({ getter, message: p.problem });
  };
  for (const c of calls.filter((x) => x.dev === id)) {
    if (c.cmd === 'link') take('link', parseLink(c.rc, c.out), (v) => (d.link = v));
    else if (c.cmd === 'ip') take('ip', parseIp(c.rc, c.out), (v) => (d.ip = v));
    else if (c.cmd === 'net_health')
      take('net_health', parseNetHealth(c.rc, c.out), (v) => (d.netHealth = v));
    else if (c.cmd === 'netdetect')
      take('netdetect', parseNetdetect(c.rc, c.out), (v) => (d.netdetect = v));
    else if (c.cmd === 'tls') take('tls', parseTls(c.rc, c.out), (v) => (d.tls = v));
    else if (c.cmd === 'optical')
      take('optical', parseOptical(c.rc, c.out), (v) => (d.optical = v));
    else if (c.cmd === 'lldp') take('lldp', parseLldp(c.rc, c.out), (v) => (d.lldp = v));
    else if (c.cmd === 'stat') take('stat', parseStat(c.rc, c.out), (v) => (d.statErrors = v));
  }
  return d;
}
