/**
 * What a call, a method call or a keyword argument must look like, as written, for a rule to take
 * it: read from the rules (their argument regexes, string arguments, `inProduct`), and checked on
 * the text before anything is parsed. A candidate that cannot be taken is not parsed for: in real
 * model code most `torch.where(…)`, `pin_memory=args.pin_mem` and `self.silu(x)` are no rule's,
 * and each statement parsed for nothing cost as much as one that holds a finding.
 *
 * Every check here only ever answers "cannot match" where the tree would say so too (the
 * analysis's own tests, run on the whole text, decide): where the text is written in a way
 * these do not read, they answer "may match".
 */

import { leadingLiterals, requiredLiterals } from './regex-literals';
import { tokenAt, type SourceTokens } from './source-tokens';

/** What every rule that may take a call needs (each rule needs at least this). */
export interface CallNeed {
  /**
   * Texts the call's arguments hold, as written: all of one of these lists (a rule's regex read
   * by requiredLiterals). Null: no text is known to be needed.
   */
  args: string[][] | null;
  /**
   * The texts may also be in the lines above, from where the function starts: a rule reads the
   * value a plain name was given there (`scores = scores + mask` above `softmax(scores)`).
   */
  above: boolean;
  /** The call is an operand of `*` (a gated activation). */
  product: boolean;
}

interface CallShape {
  argAssigned?: boolean;
  stringArg?: string;
  argRegex?: string;
  argsRegex?: string;
  objectRegex?: string;
  objectAssigned?: boolean;
  inProduct?: boolean;
}

/** See CallNeed; null where no rule is given (none can take the call). */
export function callNeed(rules: CallShape[]): CallNeed | null {
  if (!rules.length) return null;
  const alternatives: string[][] = [];
  let args = true;
  let above = false;
  let product = true;
  for (const m of rules) {
    // a method's object: its hint reads it as written, unless its value is read from above
    const fromAbove = m.argAssigned || (!m.argsRegex && !!m.objectAssigned);
    const regex = m.argRegex ?? m.argsRegex ?? (fromAbove ? m.objectRegex : undefined);
    const need = m.stringArg ? [[m.stringArg]] : regex ? requiredLiterals(regex) : null;
    if (need) alternatives.push(...need);
    else args = false;
    above ||= fromAbove;
    product &&= !!m.inProduct;
  }
  return { args: args ? alternatives : null, above, product };
}

/**
 * Per member that only method rules name (no attribute rule: `x.silu` not called is none of
 * theirs), as written (`masked_fill_` for an in-place rule): what its call needs.
 */
export function methodNeeds(
  methods: { match: CallShape & { name: string; inPlace?: boolean } }[],
  attributeNames: Set<string>,
): Map<string, CallNeed> {
  const out = new Map<string, CallNeed>();
  for (const name of new Set(methods.map((r) => r.match.name))) {
    if (attributeNames.has(name)) continue;
    const named = methods.filter((r) => r.match.name === name);
    const need = callNeed(named.map((r) => r.match))!;
    out.set(name, need);
    if (named.some((r) => r.match.inPlace)) out.set(`${name}_`, need);
  }
  return out;
}

/**
 * Per keyword argument whose every rule tests its value from its start (`^True$`; none reads a
 * plain assignment instead): the texts one of which the value starts with where a rule can take
 * it. Other keywords are not in the map.
 */
export function keywordLeads(
  keywords: { match: { name: string; valueRegex?: string; assigned?: boolean } }[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const name of new Set(keywords.map((r) => r.match.name))) {
    const leads: string[] = [];
    let all = true;
    for (const { match: m } of keywords) {
      if (m.name !== name) continue;
      const lead = !m.assigned && m.valueRegex ? leadingLiterals(m.valueRegex) : null;
      if (lead) leads.push(...lead);
      else all = false;
    }
    if (all) out.set(name, [...new Set(leads)]);
  }
  return out;
}

/** Past spaces, line ends and `\` continuations from `at`. */
export function skipGap(source: string, at: number): number {
  for (;;) {
    const ch = source.charCodeAt(at);
    if (ch === 32 || ch === 9 || ch === 10 || ch === 13 || ch === 12) at++;
    else if (ch === 92 && (source.charCodeAt(at + 1) === 10 || source.charCodeAt(at + 1) === 13))
      at += 2;
    else return at;
  }
}

/** Whether a keyword's value, starting past the spaces after `=` at `from`, may be a rule's. */
export function valueMayMatch(source: string, from: number, leads: string[]): boolean {
  const at = skipGap(source, from);
  // a comment before the value (inside brackets): left to the tree
  return source.charCodeAt(at) === 35 || leads.some((l) => source.startsWith(l, at));
}

/** How far closingBracket looks: a longer call is left to the tree. */
const CALL_REACH = 20_000;

/**
 * The offset of the bracket that closes the one at `open`, past strings and comments (the
 * lexer's tokens), or -1: not closed within CALL_REACH characters.
 */
export function closingBracket(source: string, t: SourceTokens, open: number): number {
  let depth = 0;
  const end = Math.min(source.length, open + CALL_REACH);
  for (let k = open; k < end; k++) {
    const ch = source.charCodeAt(k);
    if (ch === 40 || ch === 91 || ch === 123) depth++;
    else if (ch === 41 || ch === 93 || ch === 125) {
      if (--depth === 0) return k;
    } else if (ch === 34 || ch === 39 || ch === 35) {
      const tok = tokenAt(t, k);
      if (tok >= 0) k = t.ends[tok]! - 1;
    }
  }
  return -1;
}

/**
 * Whether the call whose expression starts at `start` (-1: not known) and whose arguments open at
 * `open` may be taken by a rule with this need.
 */
export function callMayMatch(
  source: string,
  t: SourceTokens,
  start: number,
  open: number,
  need: CallNeed,
): boolean {
  if (!need.args && !need.product) return true;
  const close = closingBracket(source, t, open);
  if (close < 0) return true;
  if (need.args) {
    const from = need.above ? functionStart(source, start < 0 ? open : start) : open;
    // a function that starts further up than a call reaches: left to the tree
    if (from < 0) return true;
    if (!need.args.some((texts) => texts.every((text) => holds(source, text, from, close))))
      return false;
  }
  return !need.product || start < 0 || productOperand(source, t, start, close);
}

/** Whether source[from, to] holds the text (searched there only: no further down the file). */
function holds(source: string, text: string, from: number, to: number): boolean {
  return source.slice(from, to + 1).includes(text);
}

/**
 * Where the function `at` is in starts: its last `def` line above (a definition between ends
 * the statements a rule reads above a call), else the text's start; -1 where that is more than
 * CALL_REACH characters up (each candidate's search stays bounded, whatever the file).
 */
function functionStart(source: string, at: number): number {
  const blank = (i: number) => source.charCodeAt(i) === 32 || source.charCodeAt(i) === 9;
  const stop = at - CALL_REACH;
  // searched for within the reach only: searched back through the whole text, a long text
  // without a `def` was read to its start at every call (20k calls on one line: 2.8 s)
  const base = Math.max(0, stop);
  const reach = source.slice(base, at + 3);
  for (let r = reach.lastIndexOf('def'); r >= 0; r = r > 0 ? reach.lastIndexOf('def', r - 1) : -1) {
    const d = base + r;
    if (!blank(d + 3)) continue;
    let b = d;
    while (b > 0 && blank(b - 1)) b--;
    if (b < d && b >= 5 && source.startsWith('async', b - 5)) {
      b -= 5;
      while (b > 0 && blank(b - 1)) b--;
    }
    const before = source.charCodeAt(b - 1);
    if (b === 0 || before === 10 || before === 13) return b;
  }
  return stop > 0 ? -1 : 0;
}

/**
 * Whether the call from `start` to its closing bracket `close` may be an operand of `*` (not
 * `**`), maybe in parentheses: what is written next to it on either side. A comment next to it
 * is left to the tree.
 */
function productOperand(source: string, t: SourceTokens, start: number, close: number): boolean {
  let l = start - 1;
  let crossed = false;
  for (; l >= 0; l--) {
    const ch = source.charCodeAt(l);
    if (ch === 10 || ch === 13 || ch === 92) crossed = true;
    else if (ch !== 32 && ch !== 9 && ch !== 12 && ch !== 40) break;
  }
  if (l >= 0 && source.charCodeAt(l) === 42 && source.charCodeAt(l - 1) !== 42) return true;
  // the line before ends in a comment: what is before the call is not known here
  if (crossed && l >= 0 && tokenAt(t, l) >= 0) return true;
  let r = close + 1;
  for (; r < source.length; r++) {
    const ch = source.charCodeAt(r);
    if (ch !== 32 && ch !== 9 && ch !== 12 && ch !== 41 && ch !== 10 && ch !== 13 && ch !== 92)
      break;
  }
  const next = source.charCodeAt(r);
  return (next === 42 && source.charCodeAt(r + 1) !== 42) || next === 35;
}
