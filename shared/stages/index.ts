import * as z from 'zod';
import type { SharedStage } from './define';
import { envStage } from './env';
import { codeStage } from './code';
import { opsStage } from './ops';
import { precisionStage } from './precision';
import { distributedStage } from './distributed';
import { profilingStage } from './profiling';

/**
 * The stages this build has, in the order a migration walks them (the seeds' order). Adding a
 * stage is one line here, one in electron/core/stages/registry.ts and one in
 * renderer/src/stages/registry.ts (docs/ARCHITECTURE.md).
 */
export const SHARED_STAGES = [
  envStage,
  codeStage,
  opsStage,
  precisionStage,
  distributedStage,
  profilingStage,
] as const;

export type StageId = (typeof SHARED_STAGES)[number]['id'];

type Inputs<T extends readonly SharedStage[]> = { [K in keyof T]: T[K]['input'] };

/** `stages.run`'s input: a union on `stage`, each stage adding its own fields. */
export const StageRunInput = z.discriminatedUnion(
  'stage',
  SHARED_STAGES.map((s) => s.input) as unknown as Inputs<typeof SHARED_STAGES>,
);
export type StageRunInput = z.output<typeof StageRunInput>;
export type StageInputOf<Id extends StageId> = Extract<StageRunInput, { stage: Id }>;

export function sharedStage(id: string): SharedStage | undefined {
  return SHARED_STAGES.find((s) => s.id === id);
}

export const isStageId = (id: string): id is StageId => !!sharedStage(id);

export { STAGE_NAMESPACES, stageNs } from './namespaces';
