import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';

const Row = z.object({
  torchNpu: z.string(),
  branch: z.string(),
  torch: z.string(),
  cann: z.string(),
  status: z.enum(['active', 'eol']),
});

const VersionMatrix = z.object({
  matrix: z.array(Row).min(1),
  pythonForTorch: z.record(z.string(), z.array(z.string())),
  torchNpuCannFamilies: z.array(
    z.object({ torchNpuProduct: z.array(z.string()), cann: z.array(z.string()) }),
  ),
  cannDriver: z.array(z.object({ cann: z.string(), driver: z.array(z.string()) })),
  recommended: z.object({
    torchNpu: z.string(),
    torch: z.string(),
    cann: z.string(),
    python: z.array(z.string()),
  }),
});

const PythonPackages = z.object({
  packages: z.array(
    z.object({
      dist: z.string(),
      status: z.enum(['warn', 'fail']),
      en: z.string(),
      zh: z.string(),
      fixEn: z.string(),
      fixZh: z.string(),
      unlessDist: z.string().optional(),
    }),
  ),
  numpy: z.object({ maxMajor: z.number(), en: z.string(), zh: z.string(), cannBefore: z.string() }),
});

const Localized = z.object({ en: z.string().min(1), 'zh-CN': z.string().min(1) });

/** The stages of a migration, in the seeds' order, and names of those this build lacks. */
const Stages = z.object({
  order: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)).min(1),
  readyWhen: z.array(z.string()),
  names: z.record(z.string(), Localized),
});

export type MatrixRow = z.infer<typeof Row>;
export type Knowledge = {
  versions: z.infer<typeof VersionMatrix>;
  packages: z.infer<typeof PythonPackages>;
  stages: z.infer<typeof Stages>;
};

let cached: Knowledge | undefined;

/** Reads and validates resources/knowledge once; a malformed file fails loudly, naming itself. */
export function loadKnowledge(dir = join(resourcesDir(), 'knowledge')): Knowledge {
  if (cached && dir === join(resourcesDir(), 'knowledge')) return cached;
  const read = <T>(file: string, schema: z.ZodType<T>): T => {
    const parsed = schema.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    if (!parsed.success)
      throw new Error(
        `${join(dir, file)} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    return parsed.data;
  };
  const k = {
    versions: read('version-matrix.json', VersionMatrix),
    packages: read('python-packages.json', PythonPackages),
    stages: read('stages.json', Stages),
  };
  if (dir === join(resourcesDir(), 'knowledge')) cached = k;
  return k;
}
