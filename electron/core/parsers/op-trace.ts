import * as z from 'zod';
import type { RawOpTrace } from '../../../shared/stages/ops/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { printable } from './printable';

/**
 * The op-capture harness's result as it comes back from a host: checked field by field before
 * anything reads it, so a damaged or hostile document is a PROBE_FAILED that says what is wrong,
 * never a TypeError deep inside classification. Sizes are capped (the harness never prints more).
 */
const str = z.string().max(10_000);
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const shape = z.array(z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER)).max(64);
const composite = z.enum(['explicit', 'implicit']).nullable();

const TracedOp = z.object({
  op: str,
  overload: str,
  count,
  shapes: z.array(z.array(shape).max(64)).max(1000),
  distinctShapes: count,
  dynamic: z.boolean(),
  dtypes: z.array(str).max(64),
  modules: z.array(str).max(1000),
  sources: z.array(z.object({ at: str, text: str })).max(1000),
  sparse: z.boolean(),
  phases: z.array(str).max(8),
  composite,
  callees: z.array(str).max(10_000).nullable(),
});

const OpTrace = z.object({
  v: z.number().default(1),
  entry: str.nullable().default(null),
  backward: z.boolean().default(false),
  torch: str.optional(),
  torchNpu: str.nullable().optional(),
  batches: count.default(0),
  inputs: z
    .array(z.array(z.union([z.object({ shape, dtype: str }), z.object({ type: str })])).max(256))
    .max(10_000),
  ops: z.array(TracedOp).max(100_000),
  warnings: z.array(str).max(10_000).default([]),
  error: z
    .object({ type: str, message: str, traceback: z.string().max(200_000), phase: str.optional() })
    .nullable()
    .default(null),
  seconds: z.number().optional(),
  observedFallbacks: z.array(str).max(10_000).optional(),
  aicpu: z.array(str).max(10_000).optional(),
  calleeFacts: z
    .record(str, z.object({ composite, callees: z.array(str).max(10_000).nullable() }))
    .optional(),
});

export function validateOpTrace(doc: unknown): RawOpTrace {
  const r = OpTrace.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new AmwError(
      'PROBE_FAILED',
      msg('errors.text.opsMalformed', {
        at: printable(issue.path.join('.').slice(0, 120)) || '(top)',
        error: printable(issue.message.slice(0, 200)),
      }),
      { path: issue.path.map(String).slice(0, 8) },
    );
  }
  return r.data as RawOpTrace;
}
