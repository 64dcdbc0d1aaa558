import type { MethodName } from '../../../../shared/api';
import type { StageId } from '../../../../shared/stages';

/**
 * The precision stage's UI, in the shape of the renderer stage registry (`id`, `View`,
 * `invalidates`): one line in renderer/src/stages/registry.ts mounts it where that registry exists.
 */
export const id = 'precision' satisfies StageId;
export { PrecisionStage as View } from './PrecisionStage';
export const invalidates: readonly MethodName[] = ['precision.history', 'precision.get'];
/** An msprobe / profiler folder imports without a host. */
export const opensWithoutHosts = true;
