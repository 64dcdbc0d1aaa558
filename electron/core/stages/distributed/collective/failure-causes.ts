import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { collectiveEn } from '../../../../../shared/stages/distributed/messages/collective.en';
import { resourcesDir } from '../../../paths';
import { ct } from './text';
import type { CollectiveLog, CollectiveResult } from './types';
import { parseKnowledgeFile } from '../../../knowledge/parse-file';

/** `collective.cause.tls.message` → whether collective.en.ts has that text. */
function hasKey(key: string): boolean {
  const path = key.split('.');
  if (path.shift() !== 'collective') return false;
  let node: unknown = collectiveEn;
  for (const part of path) {
    if (typeof node !== 'object' || node === null || !(part in node)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'string';
}

const Key = z.string().refine(hasKey, 'not a key of collective.en.ts');

const FailureCauses = z.object({
  causes: z
    .array(
      z.object({
        id: z.string().regex(/^[a-zA-Z]+$/),
        patterns: z.array(z.string().min(3)).min(1),
        message: Key,
        fix: Key,
        source: z.string().min(1),
      }),
    )
    .min(1)
    .refine((cs) => new Set(cs.map((c) => c.id)).size === cs.length, 'two causes with one id'),
});

export type FailureCause = z.infer<typeof FailureCauses>['causes'][number];

let cached: FailureCause[] | undefined;

/** Reads and validates failure-causes.json; a malformed file fails loudly, naming itself. */
export function loadFailureCauses(
  file = join(resourcesDir(), 'knowledge', 'distributed', 'failure-causes.json'),
): FailureCause[] {
  const isDefault =
    file === join(resourcesDir(), 'knowledge', 'distributed', 'failure-causes.json');
  if (cached && isDefault) return cached;
  const { causes } = parseKnowledgeFile(readFileSync(file, 'utf8'), file, FailureCauses);
  if (isDefault) cached = causes;
  return causes;
}

/** The first cause (in the file's order) that any gathered log shows, or none. */
export function nameCause(
  logs: Pick<CollectiveLog, 'text'>[],
  causes: FailureCause[] = loadFailureCauses(),
): CollectiveResult['cause'] {
  for (const c of causes) {
    if (logs.some((l) => c.patterns.some((p) => l.text.includes(p))))
      return {
        id: c.id,
        message: ct(c.message.slice('collective.'.length)),
        fix: ct(c.fix.slice('collective.'.length)),
      };
  }
  return undefined;
}
