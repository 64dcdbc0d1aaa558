import type { StageDefinition } from './define';
import { envDefinition } from './env/definition';
import { codeDefinition } from './code/definition';
import { opsDefinition } from './ops/definition';
import { precisionDefinition } from './precision/definition';
import { distributedDefinition } from './distributed/definition';
import { profilingDefinition } from './profiling/definition';

/**
 * Every stage of this build, one line each, in the order of shared/stages (the seeds' order).
 * Nothing outside a stage's own folder names it: this list is how the engine knows it.
 */
export const STAGE_DEFINITIONS: readonly StageDefinition[] = [
  envDefinition,
  codeDefinition,
  opsDefinition,
  precisionDefinition,
  distributedDefinition,
  profilingDefinition,
] as unknown as readonly StageDefinition[];

export function stageDefinition(id: string): StageDefinition | undefined {
  return STAGE_DEFINITIONS.find((d) => d.shared.id === id);
}
