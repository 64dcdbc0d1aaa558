import type { StageId } from '../../../../shared/stages';

/** The environment stage's UI (one line in ../registry.ts). */
export const id = 'env' satisfies StageId;
export { EnvStage as View } from './EnvStage';
