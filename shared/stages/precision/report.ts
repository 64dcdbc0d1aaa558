import * as z from 'zod';

const Metric = z.number().nullable();

/** The precision stage's section of a report: each run's first divergence, curve and checks. */
export const ReportPrecision = z.object({
  stageRunId: z.number(),
  source: z.enum(['run', 'import']),
  host: z.string(),
  baseline: z.string(),
  entry: z.string(),
  dtype: z.string(),
  mode: z.string(),
  counts: z.object({ pass: z.number(), warning: z.number(), error: z.number() }),
  firstDivergence: z
    .object({
      module: z.string(),
      source: z.string().nullable(),
      result: z.string(),
      cosine: Metric,
      maxAbsErr: Metric,
      statDrift: Metric,
    })
    .nullable(),
  /** Along execution order (capped): what the chart draws. */
  curve: z.array(
    z.object({
      module: z.string(),
      result: z.string(),
      cosine: Metric,
      error: Metric,
    }),
  ),
  checks: z.array(z.object({ id: z.string(), status: z.string(), summary: z.string() })),
  /**
   * The session's precision runs up to this one, each against the one before it: how the first
   * divergence moved over time (empty with a single run; the newest moves, capped).
   */
  overTime: z
    .array(z.object({ a: z.number(), b: z.number(), moved: z.string(), summary: z.string() }))
    .optional(),
});

export const precisionReport = { key: 'precision', schema: z.array(ReportPrecision) } as const;
