import { msg } from '../../../../shared/api/text';
import { AmwError, errorParam } from '../../../../shared/errors';
import type { HostDistFacts } from '../../../../shared/stages/distributed/api';
import type { Inventory } from '../../../../shared/api';
import { eachLimited } from '../../jobs/each-limited';
import type { JobContext } from '../../jobs/runner';
import type { StageServices } from '../define';
import { parseHostFacts, unreachableHost } from './facts';
import { blockingRules } from './firewall';
import { hcclPorts } from './fleet';
import type { FleetRules } from './knowledge';

export interface FleetProbeOptions {
  concurrency: number;
  hostTimeoutMs: number;
  password?: string;
}

/**
 * Every host probed once (inventory + distributed sections in one round trip), at most
 * `concurrency` at a time. A host gets `hostTimeoutMs` from the moment its turn starts, connect
 * included: one that does not answer by then is reported as such and the others go on. The job's
 * cancel stops every probe in flight.
 */
export async function probeFleet(
  names: string[],
  services: Pick<StageServices, 'hosts' | 'hostRepo'>,
  job: JobContext,
  rules: FleetRules,
  opts: FleetProbeOptions,
): Promise<{ facts: HostDistFacts[]; inventories: Map<string, { inv: Inventory; raw: string }> }> {
  const facts = new Map<string, HostDistFacts>();
  const inventories = new Map<string, { inv: Inventory; raw: string }>();
  let done = 0;
  // one listener on the job's signal for every probe in flight (not one each: a fleet's fan-out
  // would pass Node's listener limit and warn on every large run)
  const inflight = new Set<AbortController>();
  const onAbort = () => inflight.forEach((c) => c.abort());
  job.signal.addEventListener('abort', onAbort, { once: true });
  const one = async (name: string) => {
    const ctl = new AbortController();
    inflight.add(ctl);
    if (job.signal.aborted) ctl.abort();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, opts.hostTimeoutMs);
    try {
      const record = services.hostRepo.get(name);
      const probe = services.hosts.runProbe(
        name,
        { name: 'distributed', parts: ['inventory', 'distributed'], timeoutMs: opts.hostTimeoutMs },
        { signal: ctl.signal, progress: () => undefined },
        opts.password,
      );
      // the race makes the deadline hold even where a connect step ignores the signal
      const res = await Promise.race([
        probe,
        new Promise<never>((_, reject) =>
          ctl.signal.addEventListener('abort', () =>
            reject(
              new AmwError(
                'COMMAND_TIMEOUT',
                msg('errors.text.noAnswerWithin', { ms: opts.hostTimeoutMs }),
              ),
            ),
          ),
        ),
      ]);
      probe.catch(() => undefined);
      const parsed = parseHostFacts(
        res.stdout,
        name,
        record.hostname,
        new Date().toISOString(),
        (fw, f) =>
          blockingRules(fw.tool, fw.out, [
            hcclPorts(f, rules),
            { from: rules.ports.npu, to: rules.ports.npu },
          ]),
      );
      if (res.code !== 0)
        parsed.facts.warnings.push(
          msg('stage-distributed:facts.exit', { code: res.code, stderr: res.stderr.slice(-300) }),
        );
      facts.set(name, parsed.facts);
      inventories.set(name, { inv: parsed.inventory, raw: res.stdout });
    } catch (err) {
      if (job.signal.aborted) throw err;
      const error = timedOut
        ? msg('stage-distributed:reach.timeout', { seconds: Math.round(opts.hostTimeoutMs / 1000) })
        : msg('stage-distributed:reach.error', { error: errorParam(err) });
      facts.set(name, unreachableHost(name, error));
    } finally {
      clearTimeout(timer);
      inflight.delete(ctl);
      done++;
      job.progress((0.8 * done) / names.length, {
        key: 'fleetHost',
        params: { host: name, done, total: names.length },
      });
    }
  };
  try {
    await eachLimited(names, opts.concurrency, job, one);
  } finally {
    job.signal.removeEventListener('abort', onAbort);
  }
  return { facts: names.map((n) => facts.get(n)!), inventories };
}
