import { describe, expect, it } from 'vitest';
import { eachLimited } from './each-limited';

describe('eachLimited', () => {
  it('never has more than the limit in flight, and does every item', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await eachLimited(
      [1, 2, 3, 4, 5, 6, 7],
      3,
      { throwIfCancelled: () => undefined },
      async (n) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        done.push(n);
      },
    );
    expect(most).toBe(3);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('takes no new item once the job is cancelled', async () => {
    let cancelled = false;
    const done: number[] = [];
    const job = {
      throwIfCancelled: () => {
        if (cancelled) throw new Error('cancelled');
      },
    };
    await expect(
      eachLimited([1, 2, 3, 4], 1, job, async (n) => {
        done.push(n);
        if (n === 2) cancelled = true;
      }),
    ).rejects.toThrow('cancelled');
    expect(done).toEqual([1, 2]);
  });
});
