import { z } from 'zod';

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
});

export const profilingReport = { key: 'profiling', schema: z.array(ReportProfiling) } as const;
