/**
 * Reads an `nft list ruleset` or `iptables -S` listing for rules that would stop HCCL's ports:
 * a drop/reject whose destination ports overlap them, or an input policy of drop with no accept
 * covering them. Rules are text from the host: only matched, bounded, never run.
 */
export interface PortRange {
  from: number;
  to: number;
}

const overlaps = (a: PortRange, b: PortRange) => a.from <= b.to && b.from <= a.to;

/** Destination ports a rule line names (`--dport 60000:60031`, `dport { 60000-60015, 16666 }`). */
export function rulePorts(line: string): PortRange[] | null {
  const m = /(?:--dports?|dport)\s+(\{[^}]*\}|[\d:,-]+)/.exec(line);
  if (!m) return null;
  const ranges: PortRange[] = [];
  for (const tok of m[1]!.replace(/[{}]/g, '').split(/[\s,]+/)) {
    const r = /^(\d+)(?:[:-](\d+))?$/.exec(tok.trim());
    if (r) ranges.push({ from: Number(r[1]), to: Number(r[2] ?? r[1]) });
  }
  return ranges;
}

export function blockingRules(tool: string | null, listing: string, ports: PortRange[]): string[] {
  const lines = listing.split('\n').slice(0, 5000);
  const hits: string[] = [];
  const accepts: PortRange[] = [];
  let policyLine: string | null = null;
  let chain = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (tool === 'nft') {
      const c = /^chain\s+(\S+)/.exec(line);
      if (c) chain = c[1]!.toLowerCase();
      if (/hook\s+input\b.*policy\s+drop/.test(line)) policyLine = line;
    } else if (/^-P\s+INPUT\s+DROP\b/.test(line)) policyLine = line;
    const inOutput = tool === 'nft' ? chain === 'output' : /^-A\s+(OUTPUT|FORWARD)\b/.test(line);
    if (inOutput) continue;
    const named = rulePorts(line);
    if (!named) continue;
    if (/\b(drop|reject|DROP|REJECT)\b/.test(line)) {
      if (named.some((r) => ports.some((p) => overlaps(r, p)))) hits.push(line.slice(0, 300));
    } else if (/\b(accept|ACCEPT)\b/.test(line)) accepts.push(...named);
  }
  if (policyLine && !ports.every((p) => accepts.some((a) => a.from <= p.from && a.to >= p.to)))
    hits.push(policyLine.slice(0, 300));
  return hits.slice(0, 20);
}
