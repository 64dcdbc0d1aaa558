/** Small display helpers shared by the host views. */
export const dash = (v: unknown): string =>
  v === null || v === undefined || v === '' ? '—' : String(v);

export function healthClass(h: string | null | undefined): string {
  if (!h) return 'muted';
  if (h === 'OK') return 'ok';
  if (h === 'Warning' || h === 'UNKNOWN') return 'warn';
  return 'fail';
}

export const mb = (v: number | null) =>
  v === null ? '—' : v >= 1024 ? `${(v / 1024).toFixed(1)} GB` : `${v} MB`;
