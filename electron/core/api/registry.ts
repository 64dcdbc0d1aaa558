import type * as z from 'zod';
import { fieldIssues } from '../../../shared/api/validation';
import {
  contract,
  isMethodName,
  type MethodName,
  type Output,
  type ParsedInput,
} from '../../../shared/api';
import { AmwError, toWireError, type WireError } from '../../../shared/errors';

/** Who is calling: lets handlers word things for the caller and audit who did what. */
export interface CallContext {
  transport: 'ipc' | 'ws' | 'cli' | 'test';
}

export type Handler<K extends MethodName> = (
  input: ParsedInput<K>,
  ctx: CallContext,
) => Output<K> | Promise<Output<K>>;

export type Handlers = { [K in MethodName]: Handler<K> };

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
 * The one door into the core: checks the method name, validates the input against the contract,
 * runs the handler and returns a result union that never throws. Every transport goes through it.
 * A method the given handlers lack (a core without a store) is UNKNOWN_METHOD.
 */
export async function dispatch(
  handlers: Partial<Handlers>,
  method: unknown,
  input: unknown,
  ctx: CallContext,
): Promise<CallResult> {
  try {
    if (!isMethodName(method)) {
      throw new AmwError('UNKNOWN_METHOD', `Unknown method: ${String(method).slice(0, 100)}`, {
        method: String(method).slice(0, 100),
      });
    }
    const parsed = contract[method].input.safeParse(input ?? {});
    if (!parsed.success) throw validationError(method, parsed.error, input);
    const handler = handlers[method] as ((i: unknown, c: CallContext) => unknown) | undefined;
    // a core without a store (local-core.ts) answers only the methods that need none
    if (!handler) throw new AmwError('UNKNOWN_METHOD', `${method} is not served here.`, { method });
    return { ok: true, value: await handler(parsed.data, ctx) };
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
}
