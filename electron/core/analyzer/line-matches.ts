/**
 * Matches of line-anchored regexes (`/^…/gm`), found the way `re.exec` finds them but tried only
 * at line starts. V8 runs a multiline `^` pattern at every offset of the text; the scanner's
 * import, raise and loader searches are that shape, and were among a one-shot scan's costliest.
 */

/** The last text seen, its line starts and whether `\n` is its only line terminator. */
let startsText: string | null = null;
let startsOf = new Int32Array(1);
let onlyNewlines: boolean | null = null;
/** For the last text: the line starts each set of leads begins (see ledBy), by leads. */
const ledStarts = new Map<string, number[]>();

/**
 * Offsets where a line starts after a `\n` (0 first), kept for the last text: each file's
 * line count, its searches, its parser ranges and its finding positions use the same ones.
 */
export function newlineStarts(text: string): Int32Array {
  if (text === startsText) return startsOf;
  // one pass, into room for a line every 16 characters (most code), doubled when short
  let starts = new Int32Array((text.length >> 4) + 2);
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    if (n === starts.length) {
      const more = new Int32Array(n * 2);
      more.set(starts);
      starts = more;
    }
    starts[n++] = i + 1;
  }
  startsText = text;
  startsOf = starts.subarray(0, n);
  onlyNewlines = null;
  ledStarts.clear();
  return startsOf;
}

/**
 * Whether the text holds a `\r` that no `\n` follows: a line end to the parser, not to the
 * lexer and the line searches (they read `\n` only). The literal is looked for first: the regex
 * alone reads every character.
 */
export function loneCarriageReturn(text: string): boolean {
  return text.includes('\r') && /\r(?!\n)/.test(text);
}

/**
 * A string cut from a file, made its own: V8 cuts one of 13 characters or more as a view that
 * keeps the whole text alive for as long as the cut is kept. Rewritten from a one-character-longer
 * string, which V8 has to write out.
 */
export function ownText(t: string): string {
  return t.length < 13 ? t : ` ${t}`.slice(1);
}

/** The last of the ascending `starts` at or before `index` (its position; 0 if none is). */
export function lastAtOrBefore(starts: ArrayLike<number>, index: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= index) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The row and column of an offset, given the text's line starts (newlineStarts). */
export function pointAt(starts: Int32Array, index: number): { row: number; column: number } {
  const row = lastAtOrBefore(starts, index);
  return { row, column: index - starts[row]! };
}

/**
 * Where `^` matches in a multiline regex, or null where the text holds a line terminator other
 * than `\n` (`\r`, U+2028, U+2029: `^` matches after those too; such texts keep the plain regex).
 */
function lineStarts(text: string): Int32Array | null {
  const starts = newlineStarts(text);
  // a one-byte string answers each of these without a scan
  onlyNewlines ??=
    text.indexOf('\r') < 0 && text.indexOf('\u2028') < 0 && text.indexOf('\u2029') < 0;
  return onlyNewlines ? starts : null;
}

/** Whether the pattern has a `|` outside every group and character class. */
function topLevelAlternation(source: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') i++;
    else if (inClass) inClass = ch !== ']';
    else if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '|' && depth === 0) return true;
  }
  return false;
}

/** The sticky twin of a `/^…/gm` regex (null: not that shape, the regex runs as it is). */
const twins = new WeakMap<RegExp, RegExp | null>();
function stickyTwin(re: RegExp): RegExp | null {
  let twin = twins.get(re);
  if (twin === undefined) {
    const shaped =
      re.global &&
      re.multiline &&
      !re.sticky &&
      !re.unicode &&
      re.source.startsWith('^') &&
      !topLevelAlternation(re.source);
    twin = shaped ? new RegExp(re.source.slice(1), re.flags.replace('g', '') + 'y') : null;
    twins.set(re, twin);
  }
  return twin;
}

/** Literals one of which starts every match of a line-anchored regex; see ledBy. */
const leadsOf = new WeakMap<RegExp, { leads: string[]; indented: boolean }>();

/**
 * Declares that every match of a `/^…/gm` regex starts its line with one of `leads` — after the
 * line's spaces and tabs when `indented` (`/^[ \t]*(?:import|from)[ \t]/gm`). allMatches then
 * tries it only at the lines where a lead is written there, found with `indexOf`, instead of at
 * every line start: the same matches, far less work before V8 has optimised the loop (a one-shot
 * scan runs much of its first files unoptimised). Returns `re`.
 */
export function ledBy<R extends RegExp>(re: R, leads: string[], indented: boolean): R {
  if (leads.length && leads.every((l) => l && !/^[ \t]/.test(l)))
    leadsOf.set(re, { leads: [...new Set(leads)], indented });
  return re;
}

/** The line starts (after `\n`) where one of the leads begins the line's text, in order. */
function ledLineStarts(text: string, leads: string[], indented: boolean): number[] {
  const out: number[] = [];
  // each lead's hits kept where they begin a line's text, then sorted: sorting every hit first
  // (leadOffsets) sorted the many `from` and `import` in the middle of lines too
  for (const lead of leads)
    for (let at = text.indexOf(lead); at >= 0; at = text.indexOf(lead, at + 1)) {
      let ls = at;
      if (indented)
        for (
          let ch = text.charCodeAt(ls - 1);
          ch === 32 || ch === 9;
          ch = text.charCodeAt(--ls - 1)
        );
      if (ls === 0 || text.charCodeAt(ls - 1) === 10) out.push(ls);
    }
  return leads.length > 1 ? sortedOnce(out) : out;
}

/** The offsets in order, each once. */
function sortedOnce(out: number[]): number[] {
  out.sort((a, b) => a - b);
  return out.filter((at, i) => i === 0 || at !== out[i - 1]);
}

/** Global regexes whose every match starts with one of a few words, and their sticky twins. */
const wordLeads = new WeakMap<RegExp, { leads: string[]; twin: RegExp }>();

/**
 * Declares that every match of a global regex starts with one of `leads` (`\b(?:torch…|…)`,
 * `\bdef\s+…`). allMatches then tries it only where a lead is written, found with `indexOf`:
 * V8 runs a regex that starts with `\b` or an alternation at every offset of the text, and the
 * scanner's name, definition and attribute searches were that shape. Returns `re`.
 */
export function wordLed<R extends RegExp>(re: R, leads: string[]): R {
  if (re.global && !re.sticky && leads.length && leads.every((l) => l.length > 0))
    wordLeads.set(re, {
      leads: [...new Set(leads)],
      twin: new RegExp(re.source, re.flags.replace('g', '') + 'y'),
    });
  return re;
}

/** The offsets where one of the leads is written, in order, each once. */
function leadOffsets(text: string, leads: string[]): number[] {
  const out: number[] = [];
  for (const lead of leads)
    for (let at = text.indexOf(lead); at >= 0; at = text.indexOf(lead, at + 1)) out.push(at);
  return leads.length > 1 ? sortedOnce(out) : out;
}

/** allMatches of a regex declared with wordLed: its sticky twin tried at each lead. */
function wordLedMatches(
  text: string,
  led: { leads: string[]; twin: RegExp },
  out: RegExpExecArray[],
): RegExpExecArray[] {
  const tried = leadOffsets(text, led.leads);
  let from = 0;
  for (let k = 0; k < tried.length; k++) {
    const at = tried[k]!;
    if (at < from) continue;
    led.twin.lastIndex = at;
    const m = led.twin.exec(text);
    if (!m) continue;
    out.push(m);
    from = m.index + (m[0].length || 1);
  }
  return out;
}

/**
 * Every match of a global regex over the text, in order, as repeated `re.exec` from offset 0
 * finds them (an empty match moves on by one). A `/^…/gm` regex can only match where a line
 * starts, so it is tried at each line start not inside the previous match, and nowhere else —
 * one declared with ledBy only at the line starts its leads begin, one declared with wordLed
 * only where its words are.
 */
export function allMatches(re: RegExp, text: string): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  const words = wordLeads.get(re);
  if (words) return wordLedMatches(text, words, out);
  const twin = stickyTwin(re);
  const starts = twin ? lineStarts(text) : null;
  if (!twin || !starts) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      out.push(m);
      if (m[0].length === 0) re.lastIndex++;
    }
    return out;
  }
  const led = leadsOf.get(re);
  let tried: ArrayLike<number> = starts;
  if (led) {
    // searches declared with the same leads (the import hint and the import reader) share them
    const key = `${led.indented ? '\t' : ''}${led.leads.join('\n')}`;
    let hit = ledStarts.get(key);
    if (!hit) ledStarts.set(key, (hit = ledLineStarts(text, led.leads, led.indented)));
    tried = hit;
  }
  let from = 0;
  for (let k = 0; k < tried.length; k++) {
    const at = tried[k]!;
    if (at < from) continue;
    twin.lastIndex = at;
    const m = twin.exec(text);
    if (!m) continue;
    out.push(m);
    from = m.index + (m[0].length || 1);
  }
  return out;
}
