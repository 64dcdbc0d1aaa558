/**
 * ssh(1) wildcard patterns (`*` any run, `?` one character) matched without regular
 * expressions: a hostile config or known_hosts line can hold any number of `*`, and a regex built
 * from it backtracks exponentially. This is the two-pointer matcher with one resume point, which
 * takes at most |pattern| × |text| steps, and the inputs are capped before they get here.
 */
export function wildcardMatch(pattern: string, text: string, ignoreCase = true): boolean {
  const p = ignoreCase ? pattern.toLowerCase() : pattern;
  const s = ignoreCase ? text.toLowerCase() : text;
  let pi = 0;
  let si = 0;
  let star = -1;
  let resume = 0;
  while (si < s.length) {
    if (pi < p.length && (p[pi] === '?' || (p[pi] !== '*' && p[pi] === s[si]))) {
      pi++;
      si++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      resume = si;
    } else if (star >= 0) {
      pi = star + 1;
      si = ++resume;
    } else return false;
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

export const hasWildcard = (pattern: string): boolean => /[*?]/.test(pattern);

/**
 * An ssh_config pattern list (`a,b,!c` or space-separated as on a Host line): any positive match
 * and no negated one, as `match_pattern_list` in OpenSSH decides it.
 */
export function patternListMatch(patterns: string[], text: string): boolean {
  let matched = false;
  for (const raw of patterns) {
    for (const item of raw.split(',')) {
      if (!item) continue;
      const negated = item.startsWith('!');
      if (wildcardMatch(negated ? item.slice(1) : item, text)) {
        if (negated) return false;
        matched = true;
      }
    }
  }
  return matched;
}
