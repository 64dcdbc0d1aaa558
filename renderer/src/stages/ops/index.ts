import type { StageId } from '../../../../shared/stages';

/** The operator coverage stage's UI (one line in ../registry.ts). */
export const id = 'ops' satisfies StageId;
export { OpsStage as View } from './OpsStage';
