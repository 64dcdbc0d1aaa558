import type { MethodName } from '../../../../shared/api';
import type { StageId } from '../../../../shared/stages';

/** The profiling stage's UI (one line in ../registry.ts). */
export const id = 'profiling' satisfies StageId;
export { ProfilingView as View } from './ProfilingView';
export const invalidates: readonly MethodName[] = ['profiling.list', 'profiling.get'];
/** An msprobe / profiler folder imports without a host. */
export const opensWithoutHosts = true;
