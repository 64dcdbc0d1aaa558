import { DefaultLinesDiffComputer } from 'monaco-editor/editor/common/diff/defaultLinesDiffComputer/defaultLinesDiffComputer';
import type { DiffChange } from '../api';

type Inner = NonNullable<DiffChange[4]>[number];

/** Lines as Monaco's text model splits them (\r\n, \r and \n all end a line). */
const splitLines = (text: string) => text.split(/\r\n|\r|\n/);

/**
 * Beyond this many changed lines (insertions + deletions) the greedy diff's trace would grow too
 * large; such rewrites go to Monaco's own algorithm.
 */
const MAX_EDITS = 4000;

/**
 * The changes between two texts, in the form Monaco's diff worker sends them, for the review to
 * open with (the page re-diffs only after edits): lines anchored by the ones unique to both sides,
 * Myers between anchors, then the changed characters inside each block. A review's changes are
 * few and small, so this costs milliseconds on 10k lines even before the JIT has seen it.
 */
export function lineDiff(original: string, modified: string): DiffChange[] {
  const a = splitLines(original);
  const b = splitLines(modified);
  const blocks = lineBlocks(a, b);
  if (!blocks) return monacoDiff(a, b);
  return blocks.map(([a0, a1, b0, b1]) => [
    a0 + 1,
    a1 + 1,
    b0 + 1,
    b1 + 1,
    inner(a, b, a0, a1, b0, b1),
  ]);
}

type Block = [number, number, number, number];

/** Changed blocks [a0, a1, b0, b1) (0-based lines), or null when a part is past MAX_EDITS. */
export function lineBlocks(a: string[], b: string[]): Block[] | null {
  // lines as numbers: the loops compare integers, not strings
  const ids = new Map<string, number>();
  const intern = (lines: string[]) => {
    const out = new Int32Array(lines.length);
    for (let i = 0; i < lines.length; i++) {
      let id = ids.get(lines[i]!);
      if (id === undefined) ids.set(lines[i]!, (id = ids.size));
      out[i] = id;
    }
    return out;
  };
  const x = intern(a);
  const y = intern(b);
  const blocks: Block[] = [];
  return diffRange(x, y, 0, x.length, 0, y.length, blocks) ? blocks : null;
}

/**
 * Diffs x[xs, xe) against y[ys, ye) into `out`. Lines that occur once on each side anchor the
 * diff (as in patience diff); the stretches between anchors are small, and Myers' O(ND) diff is
 * cheap on them — on a whole file its cost grows with lines × changes.
 */
function diffRange(
  x: Int32Array,
  y: Int32Array,
  xs: number,
  xe: number,
  ys: number,
  ye: number,
  out: Block[],
): boolean {
  while (xs < xe && ys < ye && x[xs] === y[ys]) {
    xs++;
    ys++;
  }
  while (xe > xs && ye > ys && x[xe - 1] === y[ye - 1]) {
    xe--;
    ye--;
  }
  if (xs === xe && ys === ye) return true;
  if (xs === xe || ys === ye) {
    out.push([xs, xe, ys, ye]);
    return true;
  }
  // a short stretch: Myers directly (anchors would cost more than they save)
  if (xe - xs + (ye - ys) <= 64) return myers(x, y, xs, xe, ys, ye, out);
  const anchors = uniqueAnchors(x, y, xs, xe, ys, ye);
  if (!anchors.length) return myers(x, y, xs, xe, ys, ye, out);
  let px = xs;
  let py = ys;
  for (const [ax, ay] of anchors) {
    if (!diffRange(x, y, px, ax, py, ay, out)) return false;
    px = ax + 1;
    py = ay + 1;
  }
  return diffRange(x, y, px, xe, py, ye, out);
}

/**
 * Lines occurring exactly once in each range, paired, reduced to the longest run that keeps its
 * order on both sides (patience sorting).
 */
function uniqueAnchors(
  x: Int32Array,
  y: Int32Array,
  xs: number,
  xe: number,
  ys: number,
  ye: number,
): [number, number][] {
  // per line id: occurrences in x (1 or 2 = more), plus 3 per occurrence in y; y's position
  const count = new Map<number, number>();
  const posY = new Map<number, number>();
  for (let i = xs; i < xe; i++) count.set(x[i]!, Math.min((count.get(x[i]!) ?? 0) + 1, 2));
  for (let j = ys; j < ye; j++) {
    const c = count.get(y[j]!);
    if (c === undefined) continue; // not in x: never an anchor
    count.set(y[j]!, c + 3);
    posY.set(y[j]!, j);
  }
  const pairs: [number, number][] = [];
  for (let i = xs; i < xe; i++) {
    // exactly once in x (1) and once in y (+3)
    if (count.get(x[i]!) === 4) pairs.push([i, posY.get(x[i]!)!]);
  }
  if (pairs.length < 2) return pairs;
  // longest increasing subsequence of the y positions
  const tails: number[] = [];
  const prev = new Int32Array(pairs.length).fill(-1);
  for (let p = 0; p < pairs.length; p++) {
    const v = pairs[p]![1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tails[mid]!]![1] < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[p] = tails[lo - 1]!;
    tails[lo] = p;
  }
  const chain: [number, number][] = [];
  for (let p = tails.at(-1)!; p >= 0; p = prev[p]!) chain.push(pairs[p]!);
  return chain.reverse();
}

/**
 * Myers' greedy shortest edit script over x[xs, xe) × y[ys, ye), appended to `out` as blocks;
 * the furthest-reaching x per diagonal is kept for every d to walk back from the end. False past
 * MAX_EDITS.
 */
function myers(
  x: Int32Array,
  y: Int32Array,
  xs: number,
  xe: number,
  ys: number,
  ye: number,
  out: Block[],
): boolean {
  const n = xe - xs;
  const m = ye - ys;
  const max = Math.min(n + m, MAX_EDITS);
  const v = new Int32Array(2 * max + 3);
  const off = max + 1;
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let px =
        k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!)
          ? v[off + k + 1]!
          : v[off + k - 1]! + 1;
      let py = px - k;
      while (px < n && py < m && x[xs + px] === y[ys + py]) {
        px++;
        py++;
      }
      v[off + k] = px;
      if (px >= n && py >= m) found = d;
    }
    trace.push(v.slice(off - d, off + d + 1));
  }
  if (found < 0) return false;
  // walk back: each step is one insertion (down) or deletion (right), [isDeletion, x, y]
  const moves: [boolean, number, number][] = [];
  let px = n;
  let py = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1]!; // index k + (d - 1)
    const k = px - py;
    const at = (kk: number) => prev[kk + d - 1]!;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const pk = down ? k + 1 : k - 1;
    const sx = at(pk);
    const sy = sx - pk;
    moves.push([!down, sx, sy]);
    px = sx;
    py = sy;
  }
  // consecutive moves with no common line between them form one block
  const first = out.length;
  for (let i = moves.length - 1; i >= 0; i--) {
    const [del, mx, my] = moves[i]!;
    const last = out.length > first ? out[out.length - 1]! : undefined;
    if (last && last[1] === xs + mx && last[3] === ys + my) {
      if (del) last[1]++;
      else last[3]++;
    } else out.push([xs + mx, xs + mx + (del ? 1 : 0), ys + my, ys + my + (del ? 0 : 1)]);
  }
  return true;
}

/** Common prefix and suffix lengths of two strings (not overlapping). */
function trim(s: string, t: string): [number, number] {
  let p = 0;
  const max = Math.min(s.length, t.length);
  while (p < max && s.charCodeAt(p) === t.charCodeAt(p)) p++;
  let q = 0;
  while (q < max - p && s.charCodeAt(s.length - 1 - q) === t.charCodeAt(t.length - 1 - q)) q++;
  return [p, q];
}

/** Position (1-based line, column) after walking `text` from a start position. */
function walk(line: number, col: number, text: string, upTo: number): [number, number] {
  for (let i = 0; i < upTo; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return [line, col];
}

/** The changed characters of one block, as Monaco's range mappings. */
function inner(a: string[], b: string[], a0: number, a1: number, b0: number, b1: number): Inner[] {
  if (a1 - a0 === b1 - b0) {
    // line for line: each changed line's changed middle
    const out: Inner[] = [];
    for (let i = 0; i < a1 - a0; i++) {
      const s = a[a0 + i]!;
      const t = b[b0 + i]!;
      if (s === t) continue;
      const [p, q] = trim(s, t);
      out.push([
        a0 + i + 1,
        p + 1,
        a0 + i + 1,
        s.length - q + 1,
        b0 + i + 1,
        p + 1,
        b0 + i + 1,
        t.length - q + 1,
      ]);
    }
    return out;
  }
  // lines added or removed: the block as text, from the newline before it when it reaches the
  // end of either file (there is no line after it to start from)
  const fromPrev = (a1 === a.length || b1 === b.length) && a0 > 0 && b0 > 0;
  const text = (lines: string[], from: number, to: number) => {
    const part = lines.slice(from, to);
    if (fromPrev) return part.map((l) => `\n${l}`).join('');
    return to < lines.length ? part.map((l) => `${l}\n`).join('') : part.join('\n');
  };
  const s = text(a, a0, a1);
  const t = text(b, b0, b1);
  const startA: [number, number] = fromPrev ? [a0, a[a0 - 1]!.length + 1] : [a0 + 1, 1];
  const startB: [number, number] = fromPrev ? [b0, b[b0 - 1]!.length + 1] : [b0 + 1, 1];
  const [p, q] = trim(s, t);
  const [sl, sc] = walk(startA[0], startA[1], s, p);
  const [el, ec] = walk(sl, sc, s.slice(p), s.length - q - p);
  const [tl, tc] = walk(startB[0], startB[1], t, p);
  const [fl, fc] = walk(tl, tc, t.slice(p), t.length - q - p);
  return [[sl, sc, el, ec, tl, tc, fl, fc]];
}

/** Monaco's own algorithm, for rewrites too large for the greedy diff. */
function monacoDiff(a: string[], b: string[]): DiffChange[] {
  const result = new DefaultLinesDiffComputer().computeDiff(a, b, {
    ignoreTrimWhitespace: false,
    maxComputationTimeMs: 0,
    computeMoves: false,
  });
  return result.changes.map((c) => [
    c.original.startLineNumber,
    c.original.endLineNumberExclusive,
    c.modified.startLineNumber,
    c.modified.endLineNumberExclusive,
    (c.innerChanges ?? []).map((r): Inner => [
      r.originalRange.startLineNumber,
      r.originalRange.startColumn,
      r.originalRange.endLineNumber,
      r.originalRange.endColumn,
      r.modifiedRange.startLineNumber,
      r.modifiedRange.startColumn,
      r.modifiedRange.endLineNumber,
      r.modifiedRange.endColumn,
    ]),
  ]);
}
