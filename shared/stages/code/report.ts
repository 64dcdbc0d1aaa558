import * as z from 'zod';

/** The code stage's section of a report: the newest scan, its reviewed diffs, the history. */
export const ReportFinding = z.object({
  ruleId: z.string(),
  file: z.string(),
  line: z.number(),
  column: z.number(),
  endLine: z.number(),
  endColumn: z.number(),
  severity: z.enum(['error', 'warning', 'info']),
  category: z.string(),
  message: z.string(),
});

export const ReportCode = z.object({
  scanId: z.number(),
  root: z.string(),
  mode: z.string(),
  files: z.number(),
  lines: z.number(),
  counts: z.object({ error: z.number(), warning: z.number(), info: z.number() }),
  effort: z.object({
    level: z.string(),
    dimensions: z.record(z.string(), z.number()),
    notes: z.array(z.string()),
  }),
  findings: z.array(ReportFinding),
  /** Accepted or edited files as unified diffs, and the review state of every changed file. */
  diffs: z.array(
    z.object({
      file: z.string(),
      review: z.string(),
      applied: z.boolean(),
      patch: z.string(),
      /** Set when only some of the proposed changes were taken (the review's `1/8`). */
      partial: z.object({ accepted: z.number(), total: z.number() }).optional(),
    }),
  ),
  history: z.array(
    z.object({
      scanId: z.number(),
      at: z.string(),
      error: z.number(),
      warning: z.number(),
      info: z.number(),
    }),
  ),
});

export const codeReport = { key: 'code', schema: ReportCode.nullable() } as const;
