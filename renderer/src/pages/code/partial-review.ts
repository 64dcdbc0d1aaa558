import { lineBlocks } from '../../../../shared/diff/line-diff';

const split = (t: string) => t.split(/\r\n|\r|\n/);

/**
 * A file accepted change by change, part way, is saved as the original with just the accepted
 * changes in it: reopened as that text, the changes still to decide would be gone from the view.
 * When every change the saved text makes is one of the proposal's (no hand edit), the review
 * reopens on the proposal with those changes marked accepted; null otherwise (the saved text is
 * shown as it is).
 *
 * Keys name a change as the diff view does: its original lines (1-based start and end, `N:0`
 * for lines inserted after line N).
 */
export function partialAcceptance(
  original: string,
  proposed: string,
  reviewed: string,
): { accepted: Set<string> } | null {
  const o = split(original);
  const p = split(proposed);
  const r = split(reviewed);
  const wanted = lineBlocks(o, p);
  const got = lineBlocks(o, r);
  if (!wanted || !got || got.length === 0 || got.length >= wanted.length) return null;
  const text = (b: number[], side: string[]) =>
    `${b[0]}:${b[1]}:${side.slice(b[2], b[3]).join('\n')}`;
  const proposal = new Map(wanted.map((b) => [text(b, p), b]));
  const accepted = new Set<string>();
  for (const b of got) {
    const same = proposal.get(text(b, r));
    if (!same) return null; // a block of its own: a hand edit, shown as saved
    accepted.add(same[0] === same[1] ? `${same[0]}:0` : `${same[0] + 1}:${same[1]}`);
  }
  return { accepted };
}

/**
 * The proposal with the changes a review rejected (by key, as above) put back to the original:
 * the right-hand side as it stood when the review was saved. Keys that name no change of the
 * proposal are left out of `kept`.
 */
export function withoutRejected(
  original: string,
  proposed: string,
  rejected: ReadonlySet<string>,
): { text: string; kept: Set<string> } {
  const o = split(original);
  const p = split(proposed);
  const blocks = lineBlocks(o, p);
  const kept = new Set<string>();
  if (!blocks || rejected.size === 0) return { text: proposed, kept };
  const out: string[] = [];
  let at = 0; // the next proposal line to copy
  for (const [a0, a1, b0, b1] of blocks) {
    const key = a0 === a1 ? `${a0}:0` : `${a0 + 1}:${a1}`;
    if (!rejected.has(key)) continue;
    kept.add(key);
    out.push(...p.slice(at, b0), ...o.slice(a0, a1));
    at = b1;
  }
  out.push(...p.slice(at));
  return { text: out.join(/\r\n/.test(proposed) ? '\r\n' : '\n'), kept };
}
