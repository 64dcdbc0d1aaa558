import type { DtypePolicy } from '../../../../shared/stages/precision/api';

/**
 * Pass/warning/error limits by the target's dtype policy. msprobe's own rules (knowledge
 * ascend-profiling-precision.md §4.5: cosine 0.99 / 0.9, MaxAbsErr 0.001 / 1, statistics
 * MAGNITUDE 0.5) are applied as they are on top of these; these are tighter, because fp32 against
 * fp32 must agree to far better than 0.99 cosine, and a bf16 or fp16 policy is expected to drift
 * by about its unit roundoff (bf16 2^-8 ≈ 3.9e-3, fp16 2^-11 ≈ 4.9e-4) per rounding, compounding
 * over layers.
 *
 * `pass*`: at most this is agreement (fp32 reorderings of sums stay under 1e-6 relative);
 * `error*`: beyond this the policy's rounding no longer explains the difference.
 */
export interface Tolerance {
  /** Statistics: largest drift of max/min/mean over the output's scale, and of the L2 norm. */
  passDrift: number;
  errorDrift: number;
  /** Tensors: cosine similarity. */
  passCosine: number;
  errorCosine: number;
  /** Tensors: MaxAbsErr over the output's scale (max |bench|). */
  passAbs: number;
  errorAbs: number;
}

export const TOLERANCES: Record<DtypePolicy, Tolerance> = {
  fp32: {
    passDrift: 1e-6,
    errorDrift: 1e-4,
    passCosine: 1 - 1e-7,
    errorCosine: 0.99999,
    passAbs: 1e-6,
    errorAbs: 1e-4,
  },
  bf16: {
    passDrift: 1e-6,
    errorDrift: 0.1,
    passCosine: 1 - 1e-7,
    errorCosine: 0.99,
    passAbs: 1e-6,
    errorAbs: 0.1,
  },
  fp16: {
    passDrift: 1e-6,
    errorDrift: 0.02,
    passCosine: 1 - 1e-7,
    errorCosine: 0.999,
    passAbs: 1e-6,
    errorAbs: 0.02,
  },
};

/** msprobe's constants (core/compare: COS_THRESHOLD, COS_MAX_THRESHOLD, MAX_ABS_ERR_*, MAGNITUDE). */
export const MSPROBE = {
  cosine: 0.99,
  cosineMax: 0.9,
  maxAbs: 0.001,
  maxAbsMax: 1,
  magnitude: 0.5,
  epsilon: 1e-10,
} as const;
