import { msg } from '../../../../shared/api/text';
import { errorParam } from '../../../../shared/errors';
import type { HostDistFacts, PingResult } from '../../../../shared/stages/distributed/api';
import { eachLimited } from '../../jobs/each-limited';
import type { JobContext } from '../../jobs/runner';
import type { StageServices } from '../define';
import { parsePing, pingScript, pingsFrom, splitPingOutput } from './ping';
import type { PingPair } from './ping-plan';

/**
 * The plan's pings: one round trip per host that has any (its hccn_tool calls one after another),
 * hosts in parallel up to `concurrency`, each bounded by `hostTimeoutMs`. A host whose round trip
 * fails has its pings reported as unread with the reason; the others are kept.
 */
export async function runPings(
  plan: PingPair[],
  facts: HostDistFacts[],
  services: StageServices,
  job: JobContext,
  opts: { concurrency: number; hostTimeoutMs: number; password?: string },
): Promise<PingResult[]> {
  const hosts = facts.filter(
    (h) => h.reachable && h.hccnTool && plan.some((p) => p.from.host === h.host),
  );
  const results: PingResult[] = [];
  const one = async (h: HostDistFacts) => {
    const pings = pingsFrom(h.host, plan, facts);
    if (!pings.length) return;
    const { script, skipped } = pingScript(
      h.hccnTool,
      pings.map((p) => ({ device: p.pair.from.device, address: p.address })),
    );
    const result = (
      i: number,
      lossPct: number | null,
      problem: PingResult['problem'],
    ): PingResult => ({
      from: pings[i]!.pair.from,
      to: { ...pings[i]!.pair.to, address: pings[i]!.address },
      lossPct,
      problem,
    });
    try {
      const res = await services.hosts.transport(h.host, opts.password, job.signal).exec('sh -s', {
        stdin: script,
        timeoutMs: opts.hostTimeoutMs,
        signal: job.signal,
        maxBytes: 4 << 20,
      });
      const parts = splitPingOutput(res.stdout);
      pings.forEach((_, i) => {
        if (skipped.includes(i))
          return results.push(
            result(
              i,
              null,
              msg('stage-distributed:parse.unknown', { text: pings[i]!.address.slice(0, 60) }),
            ),
          );
        const part = parts.get(i);
        if (!part) return results.push(result(i, null, msg('stage-distributed:parse.timedOut')));
        const parsed = parsePing(part.rc, part.out);
        results.push(
          'lossPct' in parsed ? result(i, parsed.lossPct, null) : result(i, null, parsed.problem),
        );
      });
    } catch (err) {
      if (job.signal.aborted) throw err;
      const why = msg('stage-distributed:reach.error', { error: errorParam(err) });
      pings.forEach((_, i) => results.push(result(i, null, why)));
    }
  };
  await eachLimited(hosts, opts.concurrency, job, one);
  return results.sort(
    (a, b) =>
      a.from.host.localeCompare(b.from.host) ||
      a.from.device - b.from.device ||
      a.to.host.localeCompare(b.to.host) ||
      a.to.device - b.to.device,
  );
}
