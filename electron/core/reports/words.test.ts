import { describe, expect, it } from 'vitest';
import { timeText } from './words';

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
