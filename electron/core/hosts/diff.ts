import type { DiffRow } from '../../../shared/api';

/**
 * Leaf-by-leaf difference of two JSON values, paths written `versions.cann`, `npu.devices[3].health`.
 * Arrays of devices are compared by position, which is how npu-smi lists them.
 */
export function diffJson(a: unknown, b: unknown, path = ''): DiffRow[] {
  if (Object.is(a, b)) return [];
  const isObj = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(a) && Array.isArray(b)) {
    const rows: DiffRow[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      rows.push(...diffJson(a[i], b[i], `${path}[${i}]`));
    return rows;
  }
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => diffJson(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return [{ path, a: a ?? null, b: b ?? null }];
}
