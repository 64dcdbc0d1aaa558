import type { StageId } from '../../../../shared/stages';
import type { MethodName } from '../../../../shared/api';

/** The code stage's UI (one line in ../registry.ts). */
export const id = 'code' satisfies StageId;
export { CodeStage as View } from './CodeStage';
/** A finished run is a new scan: the scan lists and reviews refresh. */
export const invalidates: readonly MethodName[] = ['code.scans', 'code.get'];
