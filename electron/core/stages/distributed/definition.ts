import { distributedStage } from '../../../../shared/stages/distributed';
import { defineStage } from '../define';
import { distributedHandlers } from './handlers';

/** The distributed (HCCL) stage: the fleet probed, checked, then a real collective. */
export const distributedDefinition = defineStage({
  shared: distributedStage,
  merge: 'replace',
  run() {
    return Promise.resolve({ outcomes: [] });
  },
  handlers: distributedHandlers,
});
