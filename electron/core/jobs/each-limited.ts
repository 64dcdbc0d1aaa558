/**
 * Runs `fn` over `items` with at most `limit` in flight (hosts of a fleet, pings per host), and
 * stops taking new items once the job is cancelled. One item failing is `fn`'s to handle.
 */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  job: { throwIfCancelled(): void },
  fn: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      job.throwIfCancelled();
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
