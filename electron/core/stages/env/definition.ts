import { envStage } from '../../../../shared/stages/env';
import { nowIso } from '../../db/open';
import { defineStage } from '../define';
import { evaluateChecks, pickChecks } from '../checks';
import { ENV_CHECKS } from './checks';
import { parseEnvFacts } from './facts';

/**
 * The environment stage on one host: one probe round trip (inventory and env facts), every check
 * evaluated here as a pure function of the facts; the inventory is kept as a snapshot too.
 */
export const envDefinition = defineStage({
  shared: envStage,
  merge: 'by-check',
  checkIds: ENV_CHECKS.map((c) => c.id),
  prepare(input) {
    pickChecks(ENV_CHECKS, input.checks); // an unknown id is refused before anything starts
    return input;
  },
  async run({ input, host, job, services }) {
    const name = host!;
    const res = await services.hosts.runProbe(
      name,
      { name: 'env', parts: ['inventory', 'env'], timeoutMs: 420_000 },
      job,
      input.password,
    );
    job.throwIfCancelled();
    job.progress(0.8, { key: 'evaluating', params: { host: name } });
    const facts = parseEnvFacts(res.stdout, name, nowIso());
    if (res.code !== 0)
      facts.inventory.warnings.push(`probe exited with ${res.code}: ${res.stderr.slice(-300)}`);
    services.hosts.saveInventory(name, facts.inventory, res.stdout);
    return {
      outcomes: evaluateChecks(pickChecks(ENV_CHECKS, input.checks), facts, services.knowledge()),
    };
  },
});
