import type * as z from 'zod';

/** A refused field: the rule it broke (`validation.rule.<rule>`), its params, the field's name. */
export interface FieldIssue {
  path: string;
  field: string;
  rule: string;
  params: Record<string, string | number>;
  /** zod's own words (English), for logs. */
  message: string;
}

/**
 * What a text field may hold: each is a pattern's message in the schemas (zod's words, English, for
 * logs) and names a rule of its own (`validation.rule.<key>`), so a refusal says what is allowed
 * rather than only that something is not.
 */
export const FORMATS = {
  formatHostName: 'letters, digits, dot, dash and underscore; starts with a letter or digit',
  formatAddress: 'a host name or an IP address',
  formatLogin: 'a login name',
  formatName: 'a name without slashes',
  formatEntry: 'FILE:FUNCTION',
  formatTorchNpu: 'a torch_npu version such as 2.7.1.post8',
  formatOpName: 'aten op name',
} as const;
const FORMAT_RULES = new Map<string, string>(
  Object.entries(FORMATS).map(([rule, text]) => [text, rule]),
);

/**
 * One zod issue as a rule a user can read in any language: `rule` names the problem
 * (`validation.rule.<rule>` in the dictionaries), `params` fill it in, `field` names the field.
 */
export function issueRule(
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
      return { rule: FORMAT_RULES.get(i.message) ?? 'format', params: {} };
    case 'invalid_value':
      return { rule: 'oneOf', params: { values: i.values.map(String).join(', ') } };
    case 'unrecognized_keys':
      return { rule: 'unknownField', params: { keys: i.keys.join(', ') } };
    default:
      return { rule: 'invalid', params: {} };
  }
}

/**
 * zod issues as one issue per field (the first problem found); `input` tells a missing value
 * ("required") from a wrong one.
 */
export function fieldIssues(error: z.ZodError, input?: unknown): FieldIssue[] {
  const at = (path: PropertyKey[]) =>
    path.reduce<unknown>(
      (v, k) =>
        typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined,
      input,
    );
  const seen = new Set<string>();
  const issues: FieldIssue[] = [];
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
  return issues;
}
