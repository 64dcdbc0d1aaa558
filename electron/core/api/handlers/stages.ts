import { runStage } from '../../stages/run-stage';
import type { DomainHandlers, MethodsOf, Services } from '../services';

export function stagesHandlers(s: Services): DomainHandlers<MethodsOf<'stages'>> {
  return {
    // every stage through the one runner: the definition in the registry says the rest
    'stages.run': (input) => runStage(s, input),
    'stages.get': ({ id }) => s.sessions.run(id),
  };
}
