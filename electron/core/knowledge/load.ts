import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { resourcesDir } from '../paths';
import { distKey } from './keys';
import { parseKnowledgeFile } from './parse-file';

/**
 * The knowledge files' schemas, built when the files are first read: built as the module loads,
 * zod's schema objects were part of every command's start-up, read or not.
 */
function buildSchemas() {
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

  /** A text in both languages; it reaches i18n as a `knowledge:` key (knowledge/messages.ts). */
  const Localized = z.object({ en: z.string().min(1), 'zh-CN': z.string().min(1) });

  const PythonPackages = z.object({
    packages: z
      .array(
        z.object({
          dist: z.string().min(1),
          status: z.enum(['warn', 'fail']),
          message: Localized,
          fix: Localized,
          unlessDist: z.string().optional(),
        }),
      )
      .refine(
        (ps) => new Set(ps.map((p) => distKey(p.dist))).size === ps.length,
        'two packages with the same normalised name',
      ),
    numpy: z.object({
      maxMajor: z.number().int(),
      cannBefore: z.string(),
      message: Localized,
      fix: Localized,
    }),
  });

  /** env.limits: below these a training host gets a warning. */
  const EnvLimits = z.object({
    nofileMin: z.number().int().positive(),
    memlockMinBytes: z.number().int().positive(),
    diskFreeMinGB: z.number().positive(),
    memoryMinGB: z.number().positive(),
  });

  /** Import failures and what they mean; `pattern` is a regular expression, compiled here. */
  const ImportCauses = z.object({
    causes: z
      .array(
        z.object({
          id: z.string().regex(/^[a-z][a-z0-9-]*$/),
          pattern: z
            .string()
            .min(1)
            .transform((source, ctx) => {
              try {
                return new RegExp(source);
              } catch (err) {
                ctx.addIssue({
                  code: 'custom',
                  message: `not a regular expression: ${String(err)}`,
                });
                return z.NEVER;
              }
            }),
          message: Localized,
          fix: Localized,
        }),
      )
      .min(1)
      .refine((cs) => new Set(cs.map((c) => c.id)).size === cs.length, 'duplicate cause ids'),
  });

  /** The stages of a migration, in the seeds' order, and names of those this build lacks. */
  const Stages = z.object({
    order: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)).min(1),
    readyWhen: z.array(z.string()),
    names: z.record(z.string(), Localized),
  });
  return { Row, VersionMatrix, PythonPackages, EnvLimits, ImportCauses, Stages };
}
type Schemas = ReturnType<typeof buildSchemas>;
let schemas: Schemas | undefined;

export type MatrixRow = z.infer<Schemas['Row']>;
export type Knowledge = {
  versions: z.infer<Schemas['VersionMatrix']>;
  packages: z.infer<Schemas['PythonPackages']>;
  stages: z.infer<Schemas['Stages']>;
  envLimits: z.infer<Schemas['EnvLimits']>;
  importCauses: z.infer<Schemas['ImportCauses']>['causes'];
};

let cached: Knowledge | undefined;

/** Reads and validates resources/knowledge once; a malformed file fails loudly, naming itself. */
export function loadKnowledge(dir = join(resourcesDir(), 'knowledge')): Knowledge {
  if (cached && dir === join(resourcesDir(), 'knowledge')) return cached;
  const read = <T>(file: string, schema: z.ZodType<T>): T =>
    parseKnowledgeFile(readFileSync(join(dir, file), 'utf8'), join(dir, file), schema);
  const { VersionMatrix, PythonPackages, Stages, EnvLimits, ImportCauses } = (schemas ??=
    buildSchemas());
  const k = {
    versions: read('version-matrix.json', VersionMatrix),
    packages: read('python-packages.json', PythonPackages),
    stages: read('stages.json', Stages),
    envLimits: read('env-limits.json', EnvLimits),
    importCauses: read('import-causes.json', ImportCauses).causes,
  };
  if (dir === join(resourcesDir(), 'knowledge')) cached = k;
  return k;
}
