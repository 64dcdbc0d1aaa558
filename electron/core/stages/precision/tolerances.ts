import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../../paths';

/**
 * Pass/warning/error limits by the target's dtype policy, msprobe's own constants and tensor
 * mode's caps: data in resources/knowledge/precision.json (its `$comment` gives the sources:
 * knowledge ascend-profiling-precision.md §4.5 for msprobe's, the workbench's own for the rest).
 * msprobe's rules are applied as they are on top of the dtype-aware ones, which are tighter.
 */
const Ratio = z.number().min(0).max(1);
const ToleranceSchema = z
  .object({
    /** Statistics: largest drift of max/min/mean over the output's scale, and of the L2 norm. */
    passDrift: z.number().nonnegative(),
    errorDrift: z.number().nonnegative(),
    /** Tensors: cosine similarity. */
    passCosine: Ratio,
    errorCosine: Ratio,
    /** Tensors: MaxAbsErr over the output's scale (max |bench|). */
    passAbs: z.number().nonnegative(),
    errorAbs: z.number().nonnegative(),
  })
  .strict()
  // a pass limit looser than the error limit would make every warning an error
  .refine((t) => t.passDrift <= t.errorDrift, 'passDrift above errorDrift')
  .refine((t) => t.passCosine >= t.errorCosine, 'passCosine below errorCosine')
  .refine((t) => t.passAbs <= t.errorAbs, 'passAbs above errorAbs');

const PrecisionKnowledge = z.object({
  msprobe: z
    .object({
      cosine: Ratio,
      cosineMax: Ratio,
      maxAbs: z.number().positive(),
      maxAbsMax: z.number().positive(),
      magnitude: z.number().positive(),
      epsilon: z.number().positive(),
      oneThousandth: z.number().positive(),
      fiveThousandths: z.number().positive(),
    })
    .strict(),
  tolerances: z.object({ fp32: ToleranceSchema, bf16: ToleranceSchema, fp16: ToleranceSchema }),
  tensorMode: z
    .object({
      elementsPerOutput: z.number().int().positive(),
      bytesPerRun: z.number().int().positive(),
    })
    .strict(),
});

export type Tolerance = z.infer<typeof ToleranceSchema>;
export type PrecisionLimits = z.infer<typeof PrecisionKnowledge>;

/** Reads and validates a precision knowledge file; a malformed one fails naming itself. */
export function loadPrecisionLimits(
  file = join(resourcesDir(), 'knowledge', 'precision.json'),
): PrecisionLimits {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file} is not valid: ${(e as Error).message}`);
  }
  const parsed = PrecisionKnowledge.safeParse(doc);
  if (!parsed.success)
    throw new Error(
      `${file} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

let cached: PrecisionLimits | undefined;
/** The shipped limits, read once. */
export function precisionLimits(): PrecisionLimits {
  return (cached ??= loadPrecisionLimits());
}
