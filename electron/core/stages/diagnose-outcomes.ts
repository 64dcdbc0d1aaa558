import type { CheckOutcome } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { diagnoseRaw } from '../doctor/diagnose';

/** How much of a check's evidence the doctor reads (tracebacks and logs are small; dumps are not). */
const MAX_TEXT = 256 * 1024;

/** The strings in a check's evidence, depth first, up to the cap. */
function evidenceText(value: unknown, out: string[] = [], budget = { left: MAX_TEXT }): string[] {
  if (budget.left <= 0) return out;
  if (typeof value === 'string') {
    out.push(value.slice(0, budget.left));
    budget.left -= value.length;
  } else if (Array.isArray(value)) value.forEach((v) => evidenceText(v, out, budget));
  else if (value && typeof value === 'object')
    Object.values(value).forEach((v) => evidenceText(v, out, budget));
  return out;
}

/**
 * Every failed or errored check of every stage gets what the error doctor recognises in its
 * evidence (an import traceback, a probe's log): the user sees cause and fix beside the failure.
 */
export function withDiagnosis(outcomes: CheckOutcome[]): CheckOutcome[] {
  return outcomes.map((o) => {
    if (o.status !== 'fail' && o.status !== 'error') return o;
    const text = evidenceText(o.evidence).join('\n');
    if (!text.trim()) return o;
    const found = diagnoseRaw(text).matches;
    if (!found.length) return o;
    return {
      ...o,
      diagnosis: found.slice(0, 10).map((m) => ({ rule: m.rule.id, line: m.line, text: m.text })),
    };
  });
}

/**
 * A run that ends by an exception (a probe that failed, a launch that died) gets the same: what
 * the doctor recognises in the error's message and detail rides along in its detail, so the job's
 * error shows cause and fix. Anything else passes through unchanged.
 */
export function withErrorDiagnosis(err: unknown): unknown {
  if (!(err instanceof AmwError)) return err;
  const detail = (err.detail ?? {}) as Record<string, unknown>;
  if (detail.diagnosis) return err;
  const text = [err.message, ...evidenceText(detail)].join('\n');
  const found = diagnoseRaw(text).matches;
  if (!found.length) return err;
  const diagnosed = new AmwError(err.code, err.text ?? err.message, {
    ...detail,
    diagnosis: found.slice(0, 10).map((m) => ({ rule: m.rule.id, line: m.line, text: m.text })),
  });
  diagnosed.stack = err.stack;
  return diagnosed;
}
