import { describe, expect, it } from 'vitest';
import { evidenceView, hasEvidence } from './evidence';

describe('evidence as a reader sees it', () => {
  it('fields, records as a table, words as a list (an env check’s evidence)', () => {
    const v = evidenceView({
      nodes: [
        { path: '/dev/davinci0', read: true, write: true },
        { path: '/dev/davinci_manager', read: true, write: false },
      ],
      groups: ['HwHiAiUser', 'docker'],
      driver: null,
    });
    expect(v).toEqual({
      kind: 'fields',
      more: 0,
      fields: [
        [
          'nodes',
          {
            kind: 'table',
            columns: ['path', 'read', 'write'],
            rows: [
              ['/dev/davinci0', 'true', 'true'],
              ['/dev/davinci_manager', 'true', 'false'],
            ],
            more: 0,
            moreColumns: 0,
          },
        ],
        ['groups', { kind: 'list', items: ['HwHiAiUser', 'docker'], more: 0 }],
        ['driver', { kind: 'text', text: '—' }],
      ],
    });
  });

  it('records with different keys share one table; long lists are cut and counted', () => {
    const v = evidenceView([{ a: 1 }, { b: 'x' }]);
    expect(v).toEqual({
      kind: 'table',
      columns: ['a', 'b'],
      rows: [
        ['1', '—'],
        ['—', 'x'],
      ],
      more: 0,
      moreColumns: 0,
    });
    // a column a record lacks reads as empty, not as what every object inherits
    expect(evidenceView([{ constructor: 'x' }, { a: 1 }])).toMatchObject({
      rows: [
        ['x', '—'],
        ['—', '1'],
      ],
    });
    // records with many fields: a dozen columns, the rest counted
    const wide = evidenceView([
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])),
    ]);
    expect(wide).toMatchObject({ kind: 'table', moreColumns: 28 });
    expect(wide.kind === 'table' && wide.columns).toHaveLength(12);
    const at = Array.from({ length: 75 }, (_, i) => `train.py:${i + 1}:9`);
    const list = evidenceView({ count: 75, at });
    expect(list.kind === 'fields' && list.fields[1]![1]).toMatchObject({
      kind: 'list',
      more: 45,
    });
  });

  it('text from a host stays text, cut at a length; deep or mixed values read as compact JSON', () => {
    expect(evidenceView('x'.repeat(5000))).toMatchObject({ text: `${'x'.repeat(2000)}…` });
    expect(evidenceView('<script>alert(1)</script>')).toEqual({
      kind: 'text',
      text: '<script>alert(1)</script>',
    });
    expect(evidenceView([1, { a: 2 }])).toEqual({ kind: 'list', items: ['1', '{"a":2}'], more: 0 });
    const deep = evidenceView({ a: { b: { c: { d: { e: 1 } } } } });
    expect(JSON.stringify(deep)).toContain('{\\"e\\":1}');
  });

  it('nothing to show: no section for null, an empty record or an empty list', () => {
    expect([null, undefined, {}, []].map(hasEvidence)).toEqual([false, false, false, false]);
    expect([0, '', { a: 1 }, [1]].map(hasEvidence)).toEqual([true, true, true, true]);
  });
});
