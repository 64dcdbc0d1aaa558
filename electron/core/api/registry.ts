import type { z } from 'zod';
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
 * One zod issue as a rule a user can read in any language: `rule` names the problem
 * (`validation.rule.<rule>` in the dictionaries), `params` fill it in, `field` names the field.
 */
function issueRule(
  i: z.core.$ZodIssue,
  missing: boolean,
): { rule: string; params: Record<string, string | number> } {
  const n = (v: unknown) => (typeof v === 'bigint' ? Number(v) : (v as number));
  switch (i.code) {
    case 'too_small':
      if (i.origin === 'string')
        return n(i.minimum) <= 1
          ? { rule: 'required', params: {} }
          : { rule: 'minLength', params: { min: n(i.minimum) } };
      if (i.origin === 'array' || i.origin === 'set')
        return { rule: 'minItems', params: { min: n(i.minimum) } };
      return { rule: i.inclusive ? 'min' : 'greaterThan', params: { min: n(i.minimum) } };
    case 'too_big':
      if (i.origin === 'string') return { rule: 'maxLength', params: { max: n(i.maximum) } };
      if (i.origin === 'array' || i.origin === 'set')
        return { rule: 'maxItems', params: { max: n(i.maximum) } };
      return { rule: i.inclusive ? 'max' : 'lessThan', params: { max: n(i.maximum) } };
    case 'invalid_type':
      if (missing) return { rule: 'required', params: {} };
      if (i.expected === 'number' || i.expected === 'bigint') return { rule: 'number', params: {} };
      if (i.expected === 'int') return { rule: 'integer', params: {} };
      return { rule: 'type', params: { expected: String(i.expected) } };
    case 'not_multiple_of':
      return { rule: 'integer', params: {} };
    case 'invalid_format':
      return { rule: 'format', params: {} };
    case 'invalid_value':
      return { rule: 'oneOf', params: { values: i.values.map(String).join(', ') } };
    case 'unrecognized_keys':
      return { rule: 'unknownField', params: { keys: i.keys.join(', ') } };
    default:
      return { rule: 'invalid', params: {} };
  }
}

/**
 * Turns zod issues into a VALIDATION error with one issue per field (the first problem found),
 * each as a rule and its params, so the UI and the CLI say it in the user's language.
 */
export function validationError(method: string, error: z.ZodError, input?: unknown): AmwError {
  const at = (path: PropertyKey[]) =>
    path.reduce<unknown>(
      (v, k) =>
        typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined,
      input,
    );
  const seen = new Set<string>();
  const issues: {
    path: string;
    field: string;
    rule: string;
    params: Record<string, string | number>;
    message: string;
  }[] = [];
  for (const i of error.issues) {
    const path = i.path.map(String).join('.') || '(input)';
    if (seen.has(path)) continue;
    seen.add(path);
    const named = i.path.filter((p) => typeof p === 'string');
    const field =
      i.code === 'unrecognized_keys'
        ? (i.keys[0] ?? path)
        : String(named[named.length - 1] ?? path);
    issues.push({ path, field, ...issueRule(i, at(i.path) == null), message: i.message });
  }
  const text = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return new AmwError('VALIDATION', `Invalid input for ${method}: ${text}`, { method, issues });
}

/**
 * The one door into the core: checks the method name, validates the input against the contract,
 * runs the handler and returns a result union that never throws. Every transport goes through it.
 */
export async function dispatch(
  handlers: Handlers,
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
    const handler = handlers[method] as (i: unknown, c: CallContext) => unknown;
    return { ok: true, value: await handler(parsed.data, ctx) };
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
}
