import { describe, expect, it } from 'vitest';
import { errorAxis, errorTick, errorTicks } from './curve';

describe('the per-layer chart error axis', () => {
  it('a run where every error is 0 still draws: each module on the floor, labelled 0, above the bottom', () => {
    const axis = errorAxis([0, 0, 0]);
    expect(axis.logs).toEqual([axis.floor, axis.floor, axis.floor]);
    expect(axis.bottom).toBeLessThan(axis.floor);
    expect(errorTick(axis.floor, axis.floor)).toBe('0');
    expect(errorTicks(axis)[0]).toBe(axis.floor);
    expect(errorTicks(axis).map((v) => errorTick(v, axis.floor))).toEqual([
      '0',
      '1e-9',
      '1e-6',
      '1e-3',
      '1e0',
    ]);
  });

  it('0 sits below the smallest positive error; no error (null, NaN) is not drawn; Inf on the top', () => {
    const axis = errorAxis([0, 1e-15, 3e-4, null, Number.NaN, Infinity, 5]);
    expect(axis.floor).toBe(-16);
    expect(axis.top).toBe(1);
    expect(axis.logs[0]).toBe(-16);
    expect(axis.logs[1]).toBeCloseTo(-15, 9);
    expect(axis.logs[2]).toBeCloseTo(Math.log10(3e-4), 9);
    expect(axis.logs.slice(3, 5)).toEqual([null, null]);
    expect(axis.logs[5]).toBe(1);
    expect(errorTick(-6, axis.floor)).toBe('1e-6');
    expect(errorTick(axis.bottom, axis.floor)).toBe('');
  });
});
