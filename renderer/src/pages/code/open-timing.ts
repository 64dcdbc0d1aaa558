// When the reviewer asked for a file (a click in the file tree): the review's "opened in" figure
// runs from there to the first frame that shows the diff, fetching the file included.
let requestedAt: number | null = null;

export function markFileRequested(): void {
  requestedAt = performance.now();
}

/** The request time, once (a later open without a click starts from its own mount). */
export function takeFileRequested(fallback: number): number {
  const at = requestedAt ?? fallback;
  requestedAt = null;
  return at;
}
