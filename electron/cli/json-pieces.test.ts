import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonPieces } from './json-pieces';

// `amw scan --json` writes its JSON in pieces; whoever reads it sees JSON.stringify's text.
const whole = (v: unknown) => JSON.stringify(v, null, 2) as string | undefined;
const joined = (v: unknown, size?: number) => [...jsonPieces(v, size)].join('');

describe('JSON written in pieces', () => {
  const values: [string, unknown][] = [
    ['a number', 42],
    ['a string with a newline and a quote', 'a\n"b" → c'],
    ['null', null],
    ['an empty object and array', { a: {}, b: [], c: [[]], d: [{}] }],
    [
      'what JSON leaves out or writes as null',
      { u: undefined, f: () => 1, s: Symbol('x'), a: [undefined, () => 1, Symbol('y'), 1] },
    ],
    [
      'dates and other toJSON',
      { at: new Date(0), list: [new Date(1)], own: { toJSON: () => 'x' } },
    ],
    ['integer-like keys first, as JSON orders them', { b: 1, 2: 'two', a: [1, { 1: 'x', z: 0 }] }],
    [
      'a Map and a class instance',
      {
        m: new Map([[1, 2]]),
        c: new (class {
          x = 1;
        })(),
      },
    ],
    [
      'nesting deeper than the pieces go',
      { findings: [{ fix: { edits: [{ start: 1, text: 'x\ny' }] }, deep: [[[1, [2]]]] }] },
    ],
    ['an array at the top', [{ a: 1 }, [1, 2], 'x']],
  ];
  for (const [name, v] of values)
    it(`joins to JSON.stringify's text: ${name}`, () => {
      expect(joined(v)).toBe(whole(v));
      // and the same when every member ends a piece
      expect(joined(v, 1)).toBe(whole(v));
    });

  it('has no pieces where JSON.stringify has no text', () => {
    expect([...jsonPieces(undefined)]).toEqual([]);
    expect([...jsonPieces(() => 1)]).toEqual([]);
  });

  it('keeps each piece near its size on a scan’s findings', () => {
    const text = readFileSync(
      join(__dirname, '../../tests/fixtures/code/nanogpt-ddp/train.py'),
      'utf8',
    );
    const findings = Array.from({ length: 3000 }, (_, i) => ({
      ruleId: `rule.${i}`,
      line: i,
      message: 'torch.cuda → torch.npu',
      fix: { edits: [{ start: i, end: i + 4, text: text.slice(i, i + 40) }] },
    }));
    const scan = { root: '/x', files: 3, findings, skipped: [] };
    const pieces = [...jsonPieces(scan, 16_384)];
    expect(pieces.join('')).toBe(whole(scan));
    expect(pieces.length).toBeGreaterThan(10);
    // a piece is about the size: a run of findings, as many as made it the last time
    for (const p of pieces) expect(p.length).toBeLessThan(2 * 16_384);
  });

  it('throws as JSON.stringify does on what JSON cannot hold', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = { back: cycle };
    expect(() => joined({ a: 1n })).toThrow(TypeError);
    expect(() => joined(cycle)).toThrow(TypeError);
  });
});
