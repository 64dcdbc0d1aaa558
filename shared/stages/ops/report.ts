import * as z from 'zod';

/** The ops stage's section of a report: each run's op coverage. */
export const ReportOps = z.object({
  host: z.string(),
  entry: z.string(),
  targetTorchNpu: z.string(),
  opList: z.string(),
  breakdown: z.object({
    direct: z.number(),
    needsChange: z.number(),
    cpuFallback: z.number(),
    unsupported: z.number(),
  }),
  ops: z.array(
    z.object({
      op: z.string(),
      overload: z.string(),
      count: z.number(),
      class: z.string(),
      dynamic: z.boolean(),
      reason: z.string(),
      replacement: z.string().nullable(),
      where: z.string().nullable(),
    }),
  ),
  error: z.string().nullable(),
});

export const opsReport = { key: 'ops', schema: z.array(ReportOps) } as const;
