import type { DomainHandlers, MethodsOf, Services } from '../../api/services';
import { DistributedRepository } from './repository';

/** The distributed stage's own method: a run's stored fleet document. */
export function distributedHandlers(s: Services): DomainHandlers<MethodsOf<'distributed'>> {
  const repo = new DistributedRepository(s.db, s.artifacts);
  return {
    'distributed.get': ({ stageRunId }) => repo.get(stageRunId),
  };
}
