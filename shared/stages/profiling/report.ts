import * as z from 'zod';

const N = z.number().nullable();

/** The newest profile of the session against the one before it (before/after). */
export const ReportProfilingCompare = z.object({
  a: z.string(),
  b: z.string(),
  aStepUs: N,
  bStepUs: N,
  stepRatio: N,
  categories: z.array(z.object({ name: z.string(), aUs: N, bUs: N, diffUs: N })),
  taskTypes: z.array(z.object({ name: z.string(), aUs: z.number(), bUs: z.number(), ratio: N })),
  ops: z.array(z.object({ name: z.string(), aUs: z.number(), bUs: z.number(), ratio: N })),
  advice: z.object({ fixed: z.array(z.string()), added: z.array(z.string()) }),
});

/** The profiling stage's section of a report: each stored profile, its breakdown, top kernels, advice. */
export const ReportProfiling = z.object({
  host: z.string(),
  source: z.string(),
  kind: z.string(),
  ranks: z.number(),
  steps: z.array(
    z.object({
      rank: z.number().nullable(),
      step: z.number().nullable(),
      computingUs: z.number(),
      communicationNotOverlappedUs: z.number(),
      overlappedUs: z.number(),
      freeUs: z.number(),
      bubbleUs: z.number(),
    }),
  ),
  taskTypes: z.array(z.object({ taskType: z.string(), us: z.number(), share: z.number() })),
  top: z.array(
    z.object({
      name: z.string(),
      opType: z.string(),
      taskType: z.string(),
      us: z.number(),
      count: z.number(),
    }),
  ),
  advice: z.array(
    z.object({ id: z.string(), severity: z.string(), message: z.string(), suggestion: z.string() }),
  ),
  warnings: z.array(z.string()),
  comparison: ReportProfilingCompare.optional(),
});

export const profilingReport = { key: 'profiling', schema: z.array(ReportProfiling) } as const;
