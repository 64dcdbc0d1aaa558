import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { opsStage } from '../../../../shared/stages/ops';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import { nowIso } from '../../db/open';
import { decodeProbe, parseInventory } from '../../hosts/inventory-parse';
import { resourcesDir } from '../../paths';
import { opsReport } from './report';
import { defineStage } from '../define';
import { classifyTrace } from './classify';
import { opsOutcomes } from './outcomes';
import { opsCli } from './cli';
import { opListIndex } from './op-lists';
import { opsHandlers } from './handlers';
import { OpTraceRepository } from './repository';
import { observedOnHost, readTrace } from './trace';

/**
 * The ops stage on one host: the inventory (for the host's torch_npu) and the capture harness in
 * one round trip; the raw trace is kept as evidence and classified here, for the target version.
 */
export const opsDefinition = defineStage({
  shared: opsStage,
  report: opsReport,
  merge: 'by-check',
  handlers: opsHandlers,
  cli: opsCli,
  knowledge: () => ({ opLists: opListIndex().lists.map((l) => l.torch) }),
  prepare(input) {
    if (!input.entry === !input.script)
      throw new AmwError(
        'VALIDATION',
        'The ops stage needs either an entry (FILE:FUNCTION returning (model, batches)) or a script.',
        { issues: [{ path: 'entry', message: 'stage-ops:needsEntry' }] },
      );
    return input;
  },
  async run({ input, host, runId, job, services }) {
    const name = host!;
    const args = input.script
      ? { script: input.script, backward: !!input.backward }
      : { entry: input.entry, backward: !!input.backward };
    const res = await services.hosts.runProbe(
      name,
      {
        name: 'ops',
        parts: ['inventory', 'ops'],
        timeoutMs: 1_900_000,
        inject: {
          AMW_OPS_ARGS: JSON.stringify(args),
          OPS_HARNESS: readFileSync(join(resourcesDir(), 'probes', 'ops_trace.py'), 'utf8'),
        },
      },
      job,
      input.password,
    );
    job.throwIfCancelled();
    job.progress(0.8, { key: 'evaluating', params: { host: name } });
    const sections = decodeProbe(res.stdout, 'ops');
    const inventory = parseInventory(res.stdout, name, nowIso());
    services.hosts.saveInventory(name, inventory, res.stdout);
    const section = sections.ops_trace;
    if (!section)
      throw new AmwError('PROBE_FAILED', msg('errors.text.noPythonOps', { host: name }), {
        host: name,
      });
    const trace = readTrace(section.out);
    Object.assign(trace, observedOnHost(section.out, trace));
    const target =
      input.torchNpu ??
      inventory.versions.torchNpu ??
      trace.torchNpu ??
      services.knowledge().versions.recommended.torchNpu;
    new OpTraceRepository(services.db, services.artifacts).save(
      runId,
      input.script ?? input.entry ?? '',
      target,
      trace,
    );
    return { outcomes: opsOutcomes(classifyTrace(trace, target)) };
  },
});
