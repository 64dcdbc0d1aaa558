import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import type { Language } from '../../../shared/api/common';
import { DOCTOR_CATEGORIES } from '../../../shared/api/doctor';
import { loadKnowledge } from '../knowledge/load';
import { resourcesDir } from '../paths';

/**
 * The rule files' schemas, built when rules are first loaded: built as the module loads, zod's
 * schema objects were part of every command's start-up (`amw scan` imports this module for the
 * rules' texts, and never reads them).
 */
function buildSchemas() {
  const Text = z.object({ en: z.string().min(1), 'zh-CN': z.string().min(1) }).strict();

  const Rule = z
    .object({
      id: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
      severity: z.enum(['error', 'warning', 'info']),
      /** A line is a candidate only if it contains one of these (case-insensitive, literal). */
      keywords: z.array(z.string().min(3).max(120)).min(1),
      /** Optional refinement: the candidate must also match one of these (case-insensitive). */
      regex: z.array(z.string().min(1).max(200)).optional(),
      /** Reported only when no specific rule explains the same line (catch-all codes). */
      generic: z.boolean().optional(),
      title: Text,
      cause: Text,
      fix: Text,
      proof: z
        .object({
          /** A stage of stages.json's order (checked when the rules load). */
          stage: z
            .string()
            .regex(/^[a-z][a-z0-9-]*$/)
            .optional(),
          check: z.string().optional(),
          command: z.string().optional(),
        })
        .strict(),
      links: z.array(z.object({ title: z.string(), url: z.string().url() }).strict()),
      /** Where the rule comes from: knowledge file and section, issue threads, seeds. */
      source: z.string().min(10),
      /** Real log lines (from the sources) the rule must recognise: its tests. */
      examples: z.array(z.string().min(1)).min(1),
    })
    .strict();

  const RuleFile = z
    .object({ category: z.enum(DOCTOR_CATEGORIES), rules: z.array(Rule).min(1) })
    .strict();
  return { Rule, RuleFile };
}
let schemas: ReturnType<typeof buildSchemas> | undefined;

export type DoctorRuleData = z.infer<ReturnType<typeof buildSchemas>['Rule']>;
export interface DoctorRule extends DoctorRuleData {
  category: (typeof DOCTOR_CATEGORIES)[number];
  file: string;
  lowerKeywords: string[];
  compiled: RegExp[];
}

const MAX_UNBOUNDED = 3;

/**
 * Refuses patterns that can backtrack catastrophically: backreferences, a quantified group that
 * itself contains a quantifier (star height > 1, e.g. `(a+)+`, `(\w*x)*`), and more than
 * MAX_UNBOUNDED unbounded quantifiers. Lines are also capped before any regex sees them, so what
 * is left is at worst polynomial in a 4 KiB line.
 */
export function unsafeRegexReason(source: string): string | null {
  if (/\\[1-9]|\\k</.test(source)) return 'backreferences are not allowed';
  const stack: boolean[] = [];
  let quantifiedInside = false;
  let unbounded = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      continue;
    }
    const next = source[i + 1];
    const quantifierAt = (j: number) => {
      const q = source[j];
      if (q === '*' || q === '+' || q === '?') return q;
      if (q === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(j))) return '{';
      return null;
    };
    if (c === '(') {
      stack.push(quantifiedInside);
      quantifiedInside = false;
      continue;
    }
    if (c === ')') {
      const inner = quantifiedInside;
      quantifiedInside = stack.pop() ?? false;
      const q = next === undefined ? null : quantifierAt(i + 1);
      if (q && q !== '?' && inner) return `nested quantifier near position ${i}`;
      if (inner || q) quantifiedInside = true;
      continue;
    }
    const q = quantifierAt(i);
    if (q) {
      if (q === '*' || q === '+' || (q === '{' && /^\{\d+,\}/.test(source.slice(i)))) unbounded++;
      if (q !== '?') quantifiedInside = true;
    }
  }
  if (unbounded > MAX_UNBOUNDED) return `more than ${MAX_UNBOUNDED} unbounded quantifiers`;
  return null;
}

let cached: DoctorRule[] | undefined;

/**
 * Reads and validates every resources/knowledge/doctor/*.json: a malformed file, an unsafe regex
 * or a rule that does not recognise its own examples fails loudly, naming the file and rule.
 */
export function loadDoctorRules(dir = join(resourcesDir(), 'knowledge', 'doctor')): DoctorRule[] {
  const isDefault = dir === join(resourcesDir(), 'knowledge', 'doctor');
  if (cached && isDefault) return cached;
  const rules: DoctorRule[] = [];
  const seen = new Set<string>();
  const stages = loadKnowledge().stages.order;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const path = join(dir, file);
    const parsed = (schemas ??= buildSchemas()).RuleFile.safeParse(
      JSON.parse(readFileSync(path, 'utf8')),
    );
    if (!parsed.success)
      throw new Error(
        `${path} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    for (const r of parsed.data.rules) {
      if (seen.has(r.id)) throw new Error(`${path}: rule ${r.id} is defined twice`);
      if (r.proof.stage && !stages.includes(r.proof.stage))
        throw new Error(
          `${path}: rule ${r.id} proves with stage ${r.proof.stage}, not a stage of stages.json`,
        );
      seen.add(r.id);
      const compiled = (r.regex ?? []).map((src) => {
        const why = unsafeRegexReason(src);
        if (why) throw new Error(`${path}: rule ${r.id}: regex ${src} refused: ${why}`);
        return new RegExp(src, 'i');
      });
      rules.push({
        ...r,
        category: parsed.data.category,
        file,
        lowerKeywords: r.keywords.map((k) => k.toLowerCase()),
        compiled,
      });
    }
  }
  if (isDefault) cached = rules;
  return rules;
}

export const localised = (text: { en: string; 'zh-CN': string }, lang: Language): string =>
  text[lang];
