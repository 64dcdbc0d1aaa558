import type { StageUi } from './shared/types';
import * as env from './env';
import * as code from './code';
import * as ops from './ops';
import * as precision from './precision';
import * as distributed from './distributed';
import * as profiling from './profiling';

/**
 * The UI of each stage this build has: one line per stage, its folder beside this file
 * (`stages/<id>/index.ts` exports `id` and `View`). The rail and its order come from `app.info`;
 * a built stage missing here shows as built without a view, not as an error.
 */
export const STAGE_UIS: readonly StageUi[] = [env, code, ops, precision, distributed, profiling];

export function stageUi(id: string): StageUi | undefined {
  return STAGE_UIS.find((s) => s.id === id);
}
