import { describe, expect, it } from 'vitest';
import { worstStatus } from './worst';

describe('a fleet-matrix cell', () => {
  it('is skipped, not passed, when every outcome was not applicable', () => {
    expect(worstStatus(['skip'])).toBe('skip');
    expect(worstStatus(['skip', 'skip'])).toBe('skip');
  });

  it('passes when something passed and the rest did not apply; the worst wins otherwise', () => {
    expect(worstStatus(['skip', 'pass'])).toBe('pass');
    expect(worstStatus(['pass', 'warn', 'skip'])).toBe('warn');
    expect(worstStatus(['fail', 'error', 'pass'])).toBe('error');
  });
});
