import type { CheckOutcome } from '../../../shared/api';
import { msg } from '../../../shared/api/text';
import { AmwError } from '../../../shared/errors';
import type { CheckDef } from './define';

/** Runs every check's pure evaluator; one that throws becomes an `error` outcome, not a crash. */
export function evaluateChecks<F, K>(
  checks: CheckDef<F, K>[],
  facts: F,
  knowledge: K,
): CheckOutcome[] {
  return checks.map((def) => {
    try {
      return { id: def.id, title: def.title, ...def.evaluate(facts, knowledge) };
    } catch (err) {
      return {
        id: def.id,
        title: def.title,
        status: 'error',
        summary: msg('sessions.checkCrashed', {
          message: err instanceof Error ? err.message : String(err),
        }),
        evidence: null,
        remediation: null,
      };
    }
  });
}

/** The checks to evaluate: all, or the ones asked for by id (an unknown id is refused). */
export function pickChecks<C extends { id: string }>(all: C[], only?: string[]): C[] {
  if (!only?.length) return all;
  const unknown = only.filter((id) => !all.some((c) => c.id === id));
  if (unknown.length)
    throw new AmwError('VALIDATION', msg('errors.text.noSuchChecks', { checks: unknown }), {
      unknown,
    });
  return all.filter((c) => only.includes(c.id));
}
