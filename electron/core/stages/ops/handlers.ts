import type { DomainHandlers, MethodsOf, Services } from '../../api/services';
import { compareOps } from './compare';
import { OpTraceRepository } from './repository';

/** The ops stage's own methods: a stored trace, classified for any torch_npu, and comparisons. */
export function opsHandlers(s: Services): DomainHandlers<MethodsOf<'ops'>> {
  const traces = new OpTraceRepository(s.db, s.artifacts);
  return {
    'ops.get': ({ stageRunId, torchNpu }) => ({
      ...traces.classified(stageRunId, torchNpu),
      host: s.sessions.run(stageRunId).host,
    }),
    'ops.compare': ({ a, b, torchNpuA, torchNpuB }) =>
      compareOps(traces.classified(a, torchNpuA), traces.classified(b, torchNpuB)),
  };
}
