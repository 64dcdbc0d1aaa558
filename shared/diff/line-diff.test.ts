import { describe, expect, it } from 'vitest';
import type { DiffChange } from '../api';
import { lineDiff } from './line-diff';

/** Replays a diff's line blocks on the original's lines: must give the modified lines. */
function applyBlocks(a: string[], b: string[], diff: DiffChange[]): string[] {
  const out: string[] = [];
  let at = 1;
  for (const [a0, a1, b0, b1] of diff) {
    out.push(...a.slice(at - 1, a0 - 1));
    out.push(...b.slice(b0 - 1, b1 - 1));
    at = a1;
  }
  return [...out, ...a.slice(at - 1)];
}

/** Replays the character-level changes on the original text: must give the modified text. */
function applyInner(a: string, b: string, diff: DiffChange[]): string {
  const offsets = (text: string) => {
    const starts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
    return (line: number, col: number) => starts[line - 1]! + col - 1;
  };
  const offA = offsets(a);
  const offB = offsets(b);
  let out = a;
  const inner = diff.flatMap((c) => c[4]);
  for (const r of inner.reverse()) {
    const text = b.slice(offB(r[4], r[5]), offB(r[6], r[7]));
    out = out.slice(0, offA(r[0], r[1])) + text + out.slice(offA(r[2], r[3]));
  }
  return out;
}

/** A deterministic pseudo-random source (tests must not flake). */
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

function mutate(lines: string[], rand: () => number, edits: number): string[] {
  const out = [...lines];
  for (let e = 0; e < edits; e++) {
    const i = Math.floor(rand() * (out.length + 1));
    const kind = rand();
    if (kind < 0.3 && out.length) out.splice(Math.min(i, out.length - 1), 1);
    else if (kind < 0.6) out.splice(i, 0, `new ${Math.floor(rand() * 5)}`);
    else if (out.length) {
      const j = Math.min(i, out.length - 1);
      out[j] = out[j]!.replace(/cuda|x/, rand() < 0.5 ? 'npu' : '') + (rand() < 0.3 ? '!' : '');
    }
  }
  return out;
}

describe('the engine line diff (what a review opens with)', () => {
  it('a token renamed in a 10k-line file is one block, the token its only changed text', () => {
    const a = Array.from({ length: 10_000 }, (_, i) => `    y = layer_${i % 40}(x)  # ${i}`);
    const b = [...a];
    b[5000] = b[5000]!.replace('layer_0', 'layer_0.npu');
    const diff = lineDiff(a.join('\n'), b.join('\n'));
    expect(diff).toEqual([[5001, 5002, 5001, 5002, [[5001, 16, 5001, 16, 5001, 16, 5001, 20]]]]);
  });

  it('lines added at the start, in the middle and at the end of a file', () => {
    const a = ['import torch', 'x = 1', 'y = 2'];
    const b = [
      '#!/usr/bin/env python',
      'import torch',
      'import torch_npu',
      'x = 1',
      'y = 2',
      'z = 3',
    ];
    const diff = lineDiff(a.join('\n'), b.join('\n'));
    expect(diff.map((c) => c.slice(0, 4))).toEqual([
      [1, 1, 1, 2],
      [2, 2, 3, 4],
      [4, 4, 6, 7],
    ]);
    expect(applyInner(a.join('\n'), b.join('\n'), diff)).toBe(b.join('\n'));
  });

  it('identical texts have no changes; an empty original is all insertion', () => {
    expect(lineDiff('a\nb\n', 'a\nb\n')).toEqual([]);
    const diff = lineDiff('', 'a\nb');
    expect(applyInner('', 'a\nb', diff)).toBe('a\nb');
  });

  it('splits lines as Monaco does (\\r\\n, \\r, \\n) and reports positions in those lines', () => {
    const diff = lineDiff('a\r\nb.cuda()\r\nc', 'a\r\nb.npu()\r\nc');
    expect(diff).toEqual([[2, 3, 2, 3, [[2, 3, 2, 7, 2, 3, 2, 6]]]]);
  });

  it('random edits: replaying the blocks and the changed characters gives the modified text', () => {
    const rand = rng(7);
    for (let round = 0; round < 300; round++) {
      const size = Math.floor(rand() * 60);
      const a = Array.from(
        { length: size },
        () => `x${Math.floor(rand() * 6)} = cuda(${Math.floor(rand() * 3)})`,
      );
      const b = mutate(a, rand, Math.floor(rand() * 8));
      const diff = lineDiff(a.join('\n'), b.join('\n'));
      expect(applyBlocks(a, b, diff)).toEqual(b);
      expect(applyInner(a.join('\n'), b.join('\n'), diff)).toBe(b.join('\n'));
      // blocks are in order, do not touch, and each changes something
      for (let i = 0; i < diff.length; i++) {
        const [a0, a1, b0, b1] = diff[i]!;
        expect(a1 > a0 || b1 > b0).toBe(true);
        if (i) expect(a0).toBeGreaterThan(diff[i - 1]![1] - 1);
      }
    }
  });

  it('large files with repeated and unique lines (the anchored path) replay exactly', () => {
    const rand = rng(11);
    for (let round = 0; round < 40; round++) {
      const size = 200 + Math.floor(rand() * 3000);
      // half the lines repeat (bodies), half are unique (definitions), as in code
      const a = Array.from({ length: size }, (_, i) =>
        i % 2 ? `    y = y + ${i % 5} * x.cuda()` : `def f_${i}(x):`,
      );
      const b = mutate(a, rand, 1 + Math.floor(rand() * 60));
      const diff = lineDiff(a.join('\n'), b.join('\n'));
      expect(applyBlocks(a, b, diff)).toEqual(b);
      expect(applyInner(a.join('\n'), b.join('\n'), diff)).toBe(b.join('\n'));
    }
  });

  it('a rewrite too large for the greedy diff still diffs correctly (Monaco algorithm)', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`);
    const diff = lineDiff(a.join('\n'), b.join('\n'));
    expect(applyBlocks(a, b, diff)).toEqual(b);
    expect(applyInner(a.join('\n'), b.join('\n'), diff)).toBe(b.join('\n'));
  });
});
