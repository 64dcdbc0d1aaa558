import { msg, type Msg } from '../../../../shared/api/text';
import type { HostDistFacts, PingResult } from '../../../../shared/stages/distributed/api';

export type { PingResult };
import { remoteCommand, shellQuote } from '../../ssh/quote';
import { excerpt } from './hccn-parse';
import type { PingPair } from './ping-plan';

/** The tools the probe may report: a path from the host is used only if it is one of these. */
const KNOWN_TOOLS = ['/usr/local/Ascend/driver/tools/hccn_tool'];
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const OUT_LIMIT = 4096;

/**
 * The pings one host runs, in one round trip (`sh -s`, the script on stdin), one after another:
 * hccn_tool is not safe to run twice at once on a host. Every command is built by
 * remoteCommand(); the peer address came from another host's output, so only a plain IPv4
 * address is used (anything else is reported, not sent).
 */
export function pingScript(
  tool: string | null,
  pings: { device: number; address: string }[],
): { script: string; skipped: number[] } {
  const exe = tool && KNOWN_TOOLS.includes(tool) ? tool : 'hccn_tool';
  const lines = [
    'run_ping() { out=$("$@" 2>&1); rc=$?; printf "%s\\n" "$out" | head -c ' +
      OUT_LIMIT +
      '; echo "@@AMW-RC@@ $rc"; }',
    'to() { if command -v timeout >/dev/null 2>&1; then timeout 20 "$@"; else "$@"; fi; }',
  ];
  const skipped: number[] = [];
  pings.forEach((p, i) => {
    if (!Number.isInteger(p.device) || p.device < 0 || !IPV4.test(p.address)) {
      skipped.push(i);
      return;
    }
    lines.push(`echo ${shellQuote(`@@AMW-PING@@ ${i}`)}`);
    lines.push(
      `run_ping to ${remoteCommand(exe, '-i', String(p.device), '-ping', '-g', 'address', p.address)}`,
    );
  });
  return { script: `${lines.join('\n')}\n`, skipped };
}

/** `N packets transmitted, M received, X% packet(s) loss` (§2.9: both builds' wordings). */
export function parsePing(rc: number, out: string): { lossPct: number } | { problem: Msg } {
  const m = /(\d+) packets transmitted, (\d+) received, ([\d.]+)% packets? loss/.exec(out);
  if (m) return { lossPct: Number(m[3]) };
  if (/hccn_tool is busy/i.test(out)) return { problem: msg('stage-distributed:parse.busy') };
  if (rc === 124) return { problem: msg('stage-distributed:parse.timedOut') };
  if (rc !== 0)
    return { problem: msg('stage-distributed:parse.failed', { rc, text: excerpt(out) }) };
  return {
    problem: out.trim()
      ? msg('stage-distributed:parse.unknown', { text: excerpt(out) })
      : msg('stage-distributed:parse.empty'),
  };
}

/** The pieces of the script's output, by ping index. */
export function splitPingOutput(stdout: string): Map<number, { rc: number; out: string }> {
  const res = new Map<number, { rc: number; out: string }>();
  const parts = stdout.split(/^@@AMW-PING@@ (\d+)$/m);
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const body = parts[i + 1]!;
    const rc = /@@AMW-RC@@ (\d+)\s*$/.exec(body);
    res.set(Number(parts[i]), {
      rc: rc ? Number(rc[1]) : 1,
      out: body.replace(/@@AMW-RC@@ \d+\s*$/, '').trim(),
    });
  }
  return res;
}

/** The plan's pairs from one host, with the peer's address; pairs whose peer has none are dropped. */
export function pingsFrom(
  host: string,
  plan: PingPair[],
  facts: HostDistFacts[],
): { pair: PingPair; address: string }[] {
  const ip = (h: string, d: number) =>
    facts.find((f) => f.host === h)?.devices.find((x) => x.id === d)?.ip?.address ?? null;
  return plan
    .filter((p) => p.from.host === host)
    .flatMap((pair) => {
      const address = ip(pair.to.host, pair.to.device);
      return address ? [{ pair, address }] : [];
    });
}
