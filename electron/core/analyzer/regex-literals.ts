/**
 * What text a rule's regex cannot match without: read from the regex's source, so a candidate
 * whose text lacks it is left out of the parse (the rule could not take it there). Conservative
 * by construction: where the source is written in a way this does not read, it answers null
 * (no requirement), never a literal the regex can do without.
 */

/** A regex source split at its top-level `|` (not inside a group or a class). */
function alternatives(src: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (ch === '\\') i++;
    else if (ch === '[') i = classEnd(src, i);
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '|' && depth === 0) {
      out.push(src.slice(from, i));
      from = i + 1;
    }
  }
  out.push(src.slice(from));
  return out;
}

/** The index of the `]` that closes the class opened at `i` (the source's end if none). */
function classEnd(src: string, i: number): number {
  // `[]…]` and `[^]…]` hold a literal `]` first
  let j = i + 1;
  if (src[j] === '^') j++;
  if (src[j] === ']') j++;
  for (; j < src.length; j++) {
    if (src[j] === '\\') j++;
    else if (src[j] === ']') return j;
  }
  return src.length;
}

/** The index after the group opened at `i` (the source's end if it is not closed). */
function groupEnd(src: string, i: number): number {
  let depth = 0;
  for (let j = i; j < src.length; j++) {
    const ch = src[j]!;
    if (ch === '\\') j++;
    else if (ch === '[') j = classEnd(src, j);
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return j + 1;
  }
  return src.length;
}

const QUANTIFIER = /^[?*{]/;

/**
 * The runs of literal characters that every match of one alternative holds, in order, as
 * written at its top level: a group, a class, `.`, an escape like `\s` or an anchor ends a
 * run; a character made optional (`x?`, `x*`, `x{0,1}`) is not part of it.
 */
function literalRuns(alt: string): { runs: string[]; anchored: boolean } {
  const runs: string[] = [];
  let run = '';
  const end = () => {
    if (run) runs.push(run);
    run = '';
  };
  const anchored = alt.startsWith('^');
  for (let i = anchored ? 1 : 0; i < alt.length;) {
    const ch = alt[i]!;
    let lit: string | null = null;
    let next = i + 1;
    if (ch === '\\') {
      const e = alt[i + 1] ?? '';
      // an escaped punctuation character is itself; `\s`, `\b`, `\d`, `\1`, `\u…` are not
      if (/[^A-Za-z0-9]/.test(e) && e !== '') lit = e;
      next = i + 2;
    } else if (ch === '[') next = classEnd(alt, i) + 1;
    else if (ch === '(') next = groupEnd(alt, i);
    else if (!/[.^$|)+?*{}]/.test(ch)) lit = ch;
    // a quantifier after it: `+` keeps one of it, `?`, `*` and `{…}` may keep none
    const q = alt[next] ?? '';
    if (lit !== null && !QUANTIFIER.test(q)) {
      run += lit;
      if (q === '+') end();
    } else end();
    i = next;
    if (q === '?' || q === '*' || q === '+') i++;
    else if (q === '{') i = Math.max(i, alt.indexOf('}', i) + 1 || alt.length);
    // a lazy or possessive mark after the quantifier
    if ((q === '?' || q === '*' || q === '+' || q === '{') && alt[i] === '?') i++;
  }
  end();
  return { runs, anchored };
}

/** A backreference or a flag group: what a literal means there is not read here. */
const beyondReading = (src: string) =>
  /\\k<|\(\?[a-z-]+[:)]/i.test(src.replace(/\(\?(?:[:=!]|<[=!])/g, ''));

/**
 * What every match of the regex holds: per top-level alternative, its runs of literal
 * characters (a match holds every run of one alternative). Null where some alternative has
 * none (or the source uses a construct that changes what a literal means: a backreference, a
 * flag group).
 */
export function requiredLiterals(src: string): string[][] | null {
  if (beyondReading(src)) return null;
  const out: string[][] = [];
  for (const alt of alternatives(src)) {
    const { runs } = literalRuns(alt);
    if (!runs.length) return null;
    out.push([...new Set(runs)]);
  }
  return out;
}

/**
 * Texts one of which every match of an anchored regex (`^True$`) starts with: per top-level
 * alternative, the literal characters right after its `^`. Null where an alternative is not
 * anchored or starts otherwise.
 */
export function leadingLiterals(src: string): string[] | null {
  if (beyondReading(src)) return null;
  const out: string[] = [];
  for (const alt of alternatives(src)) {
    // `^["']gpu["']$`: a class of a few plain characters first is each of them in turn
    const cls = /^\^\[([^\]\\^-]{1,4})\]/.exec(alt);
    if (cls) {
      const rest = alt.slice(cls[0].length);
      const each = [...cls[1]!].map((ch) => leadingLiterals(`^${escapeChar(ch)}${rest}`));
      if (each.some((l) => !l)) return null;
      out.push(...each.flatMap((l) => l!));
      continue;
    }
    const { runs, anchored } = literalRuns(alt);
    const first = runs[0] ?? '';
    // the run must start right after `^`: the source's own first characters
    if (!anchored || !first || !startsWithRun(alt.slice(1), first)) return null;
    out.push(first);
  }
  return [...new Set(out)];
}

const escapeChar = (ch: string) => (/[.*+?^${}()|[\]\\/]/.test(ch) ? `\\${ch}` : ch);

/** Whether the source's first characters are the run (each maybe escaped): nothing before it. */
function startsWithRun(src: string, run: string): boolean {
  let i = 0;
  for (const ch of run) {
    if (src[i] === '\\' && src[i + 1] === ch) i += 2;
    else if (src[i] === ch) i++;
    else return false;
  }
  return true;
}
