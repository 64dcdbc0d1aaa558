import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { resourcesDir } from '../../paths';
import { parseKnowledgeFile } from '../../knowledge/parse-file';

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
  return parseKnowledgeFile(readFileSync(file, 'utf8'), file, PrecisionKnowledge);
}

let cached: PrecisionLimits | undefined;
/** The shipped limits, read once. */
export function precisionLimits(): PrecisionLimits {
  return (cached ??= loadPrecisionLimits());
}
