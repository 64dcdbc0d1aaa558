import { AmwError } from '../../../../shared/errors';
import type {
  CollectiveSummary,
  DistributedResult,
} from '../../../../shared/stages/distributed/api';
import { distributedStage } from '../../../../shared/stages/distributed';
import { defineStage } from '../define';
import { FLEET_CHECKS, evaluateFleet, type FleetFacts } from './checks';
import { distributedCli } from './cli';
import { runCollective } from './collective/index';
import { disagreements } from './fleet';
import { distributedHandlers } from './handlers';
import { fleetRules } from './knowledge';
import { pingPlan } from './ping-plan';
import { runPings } from './run-pings';
import { probeFleet } from './probe-fleet';
import { checkRankTable, generateRankTable } from './rank-table';
import { distributedReport } from './report';
import { DistributedRepository } from './repository';

const DEFAULTS = { concurrency: 16, hostTimeoutS: 120, collectiveDeadlineS: 600 };

/**
 * The distributed (HCCL) stage over a fleet: every host probed once, in parallel with a limit
 * (hccn_tool serialised within a host by the probe), the rank table checked or generated, pure
 * fleet checks evaluated, then — unless turned off or hosts are missing — a real collective.
 * The fleet document is stored beside the checks (distributed.get).
 */
export const distributedDefinition = defineStage({
  shared: distributedStage,
  merge: 'replace',
  prepare(input, services) {
    let hosts = input.hosts;
    if (!hosts?.length && input.tag) {
      const tag = input.tag;
      hosts = services.hostRepo
        .list()
        .filter((h) => h.tags.includes(tag) || h.group === tag)
        .map((h) => h.name);
      if (!hosts.length)
        throw new AmwError('VALIDATION', `No host has the tag or group "${tag}".`, {
          messageKey: 'stage-distributed:cli.noTagged',
          tag,
        });
    }
    if (!hosts?.length)
      throw new AmwError('VALIDATION', 'Give hosts (HOST[,HOST…]) or a tag.', {
        messageKey: 'stage-distributed:cli.needHosts',
      });
    fleetRules(); // a broken knowledge file is refused before anything is stored
    return { ...input, hosts: [...new Set(hosts)] };
  },
  async run({ input, hosts, job, services, runId }) {
    const rules = fleetRules();
    const { facts: hostFacts, inventories } = await probeFleet(hosts, services, job, rules, {
      concurrency: input.concurrency ?? DEFAULTS.concurrency,
      hostTimeoutMs: (input.hostTimeoutS ?? DEFAULTS.hostTimeoutS) * 1000,
      password: input.password,
    });
    job.throwIfCancelled();
    for (const [name, { inv, raw }] of inventories) services.hosts.saveInventory(name, inv, raw);
    const hostnames = Object.fromEntries(hosts.map((h) => [h, services.hostRepo.get(h).hostname]));
    const rankTable =
      input.rankTable !== undefined
        ? checkRankTable(input.rankTable, input.rankTableFile ?? 'hccl.json', hostFacts, hostnames)
        : generateRankTable(hostFacts);
    const plan = pingPlan(
      hostFacts
        .filter((h) => h.reachable)
        .map((h) => ({ host: h.host, devices: h.devices.map((d) => d.id) })),
      rules,
    );
    const pings = await runPings(plan.list, hostFacts, services, job, {
      concurrency: input.concurrency ?? DEFAULTS.concurrency,
      hostTimeoutMs: (input.hostTimeoutS ?? DEFAULTS.hostTimeoutS) * 1000,
      password: input.password,
    });
    job.throwIfCancelled();
    const missing = hostFacts.filter((h) => !h.reachable);
    let collective: CollectiveSummary | null = null;
    const state: FleetFacts['collectiveState'] =
      input.collective === false ? 'off' : missing.length ? 'blocked' : 'ran';
    if (state === 'ran') {
      job.progress(0.85, { key: 'evaluating', params: { host: hosts.join(',').slice(0, 80) } });
      const deadlineMs = (input.collectiveDeadlineS ?? DEFAULTS.collectiveDeadlineS) * 1000;
      collective = await runCollective(
        hostFacts.map((h) => ({
          name: h.host,
          transport: services.hosts.transport(h.host, input.password, job.signal),
          address: h.address ?? hostnames[h.host]!,
          npuCount: h.npuCount,
          hasNpu: h.devices.length > 0 || h.npuCount > 0,
        })),
        {
          deadlineMs,
          signal: job.signal,
          launcher: input.launcher ?? 'auto',
          masterPort: input.masterPort,
          progress: (f) =>
            job.progress(0.85 + 0.1 * Math.max(0, Math.min(1, f)), {
              key: 'evaluating',
              params: { host: hosts.join(',').slice(0, 80) },
            }),
        },
      );
      job.throwIfCancelled();
    }
    const facts: FleetFacts = {
      hosts: hostFacts,
      rankTable,
      collective,
      collectiveState: state,
      blockedHosts: missing.length,
      pings,
      pingPlan: { rule: plan.rule, pairs: plan.pairs, devices: plan.devices },
    };
    const result: DistributedResult = {
      hosts: hostFacts,
      disagreements: disagreements(hostFacts, rules),
      rankTable,
      pingPlan: { rule: plan.rule, pairs: plan.pairs, devices: plan.devices },
      pings,
      collective,
    };
    new DistributedRepository(services.db, services.artifacts).save(runId, result);
    return { outcomes: evaluateFleet(FLEET_CHECKS, facts, rules) };
  },
  knowledge: () => ({ fleetRules: fleetRules().version }),
  report: distributedReport,
  cli: distributedCli,
  handlers: distributedHandlers,
});
