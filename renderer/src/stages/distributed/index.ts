import type { MethodName } from '../../../../shared/api';
import type { StageId } from '../../../../shared/stages';

/** The distributed (HCCL) stage's UI (one line in ../registry.ts). */
export const id = 'distributed' satisfies StageId;
export { DistributedView as View } from './DistributedView';
export const invalidates: readonly MethodName[] = ['distributed.get'];
