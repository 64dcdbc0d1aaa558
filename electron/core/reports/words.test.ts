import { describe, expect, it } from 'vitest';
import { timeText } from './words';
import { mdText, tidyBlankLines } from './md-kit';

describe('timeText', () => {
  it('shows a stored UTC time to the minute, marked UTC', () => {
    expect(timeText('2026-12-06T15:50:10.123Z')).toBe('2026-12-06 15:50 UTC');
    expect(timeText('2026-12-06T07:05Z')).toBe('2026-12-06 07:05 UTC');
    expect(timeText('2026-12-06T07:05:00+00:00')).toBe('2026-12-06 07:05 UTC');
  });
  it('leaves a time in another zone, or anything else, as it was stored', () => {
    expect(timeText('2026-12-06T15:50:10+08:00')).toBe('2026-12-06T15:50:10+08:00');
    expect(timeText('yesterday')).toBe('yesterday');
    expect(timeText('')).toBe('');
  });
});

describe('rule texts in Markdown', () => {
  it('keeps their code spans as code and makes the rest inert', () => {
    expect(mdText('Add `import torch_npu` after the *imports*')).toBe(
      'Add `import torch_npu` after the \\*imports\\*',
    );
    // a pipe in a span cannot split a table row
    expect(mdText('Use `a | b` <here>')).toBe('Use `a \\| b` &lt;here&gt;');
    expect(mdText('no spans')).toBe('no spans');
  });
});

describe('blank lines in Markdown', () => {
  it('keeps one between blocks, and every line of a fenced block', () => {
    expect(tidyBlankLines('# a\n\n\n\nb\n\n')).toBe('# a\n\nb\n');
    const diff = '````diff\n-x\n\n\n+y\n````';
    expect(tidyBlankLines(`\n\ntext\n\n\n${diff}\n\n\nend`)).toBe(`text\n\n${diff}\n\nend`);
  });
});
