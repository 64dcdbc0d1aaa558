import { describe, expect, it } from 'vitest';
import { formatDateTime, formatNumber } from './format';

const AT = '2026-03-04T05:06:00Z';

describe('dates and numbers follow the chosen UI language', () => {
  it('writes one instant the way each language does', () => {
    const zh = formatDateTime(AT, 'zh-CN');
    const en = formatDateTime(AT, 'en');
    expect(zh).toMatch(/2026年3月4日/);
    expect(en).toMatch(/Mar 4, 2026/);
    expect(formatDateTime(new Date(AT), 'zh-CN')).toBe(zh);
    expect(formatNumber(1234567, 'en')).toBe('1,234,567');
  });

  it('shows an unreadable stored time as it is, never "Invalid Date" or a crash', () => {
    expect(formatDateTime('not a time', 'zh-CN')).toBe('not a time');
  });
});
