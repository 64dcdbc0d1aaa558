import * as z from 'zod';

/** The distributed stage's section of a report: the fleet matrix, what disagrees, the collective. */
export const ReportDistributed = z.object({
  stageRunId: z.number(),
  hosts: z.array(z.string()),
  /** Check ids (the matrix's columns). */
  checks: z.array(z.object({ id: z.string(), title: z.string() })),
  /** One cell per host and check: the worst status of its outcomes, with their summaries. */
  matrix: z.array(
    z.object({
      host: z.string(),
      cells: z.array(z.object({ check: z.string(), status: z.string(), summary: z.string() })),
    }),
  ),
  fleetChecks: z.array(z.object({ id: z.string(), status: z.string(), summary: z.string() })),
  disagreements: z.array(
    z.object({
      item: z.string(),
      values: z.array(z.object({ host: z.string(), value: z.string().nullable() })),
    }),
  ),
  collective: z
    .object({
      launcher: z.string(),
      backend: z.string(),
      worldSize: z.number(),
      ok: z.boolean(),
      busBandwidthGBs: z.number().nullable(),
      error: z.string().nullable(),
      cause: z.string().nullable(),
      bandwidth: z.array(z.object({ bytes: z.number(), busBandwidthGBs: z.number() })),
    })
    .nullable(),
});

export const distributedReport = {
  key: 'distributed',
  schema: z.array(ReportDistributed),
} as const;
