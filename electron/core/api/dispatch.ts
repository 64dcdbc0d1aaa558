import type * as z from 'zod';
import { fieldIssues } from '../../../shared/api/validation';
import type { MethodSpec } from '../../../shared/api/define';
import { AmwError, toWireError, type WireError } from '../../../shared/errors';

/** Who is calling: lets handlers word things for the caller and audit who did what. */
export interface CallContext {
  transport: 'ipc' | 'ws' | 'cli' | 'test';
}

export type CallResult = { ok: true; value: unknown } | { ok: false; error: WireError };

/**
 * Turns zod issues into a VALIDATION error with one issue per field, each as a rule and its
 * params, so the UI and the CLI say it in the user's language.
 */
export function validationError(method: string, error: z.ZodError, input?: unknown): AmwError {
  const issues = fieldIssues(error, input);
  const text = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return new AmwError('VALIDATION', `Invalid input for ${method}: ${text}`, { method, issues });
}

/**
 * Dispatch over the methods given: checks the method name, validates the input against its
 * spec, runs the handler and returns a result union that never throws. The whole contract
 * (registry.ts) is one such set of specs; a one-shot command passes only the specs it calls
 * (local-core.ts), so it never builds the schemas of the other ~100 methods (a tenth of an
 * empty `amw scan`'s start-up).
 */
export async function dispatchTo(
  specs: Readonly<Record<string, MethodSpec>>,
  handlers: Readonly<Record<string, ((input: never, ctx: CallContext) => unknown) | undefined>>,
  method: unknown,
  input: unknown,
  ctx: CallContext,
): Promise<CallResult> {
  try {
    if (typeof method !== 'string' || !Object.prototype.hasOwnProperty.call(specs, method)) {
      throw new AmwError('UNKNOWN_METHOD', `Unknown method: ${String(method).slice(0, 100)}`, {
        method: String(method).slice(0, 100),
      });
    }
    const parsed = specs[method]!.input.safeParse(input ?? {});
    if (!parsed.success) throw validationError(method, parsed.error, input);
    const handler = handlers[method] as ((i: unknown, c: CallContext) => unknown) | undefined;
    // a core without a store (local-core.ts) answers only the methods that need none
    if (!handler) throw new AmwError('UNKNOWN_METHOD', `${method} is not served here.`, { method });
    return { ok: true, value: await handler(parsed.data, ctx) };
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
}
