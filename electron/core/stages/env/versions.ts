import type { Knowledge, MatrixRow } from '../../knowledge/load';

/** `2.1.0.post12+cpu` → `2.1.0.post12`; `1.13.0a0+gitunknown` → `1.13.0a0`. */
export const stripLocal = (v: string) => v.split('+')[0]!.trim();

/** torch / torch_npu base release, without .postN or pre-release tags: `2.1.0.post12` → `2.1.0`. */
export function baseRelease(v: string): string {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(stripLocal(v));
  return m ? `${m[1]}.${m[2]}.${m[3] ?? '0'}` : v;
}

/** CANN versions compare case-insensitively: `8.1.rc1` = `8.1.RC1`. */
export const normCann = (v: string) => v.trim().toUpperCase();

/** Driver `25.0.rc1.1` → `25.0.RC1.1`. */
export const normDriver = (v: string) => v.trim().toUpperCase();

/** TorchNPU product version from the branch name: `v2.1.0-7.0.0` → `7.0`. */
export function productOf(row: MatrixRow): string {
  const m = /-(\d+)\.(\d+)/.exec(row.branch);
  return m ? `${m[1]}.${m[2]}` : '';
}

const cannFamilyMatch = (cann: string, family: string) => {
  const c = normCann(cann);
  const f = normCann(family);
  return c === f || c.startsWith(`${f}.`);
};

export interface MatrixVerdict {
  /** exact: the row pairs this torch_npu with this CANN; compatible: a documented cross-version pairing. */
  kind: 'exact' | 'compatible' | 'mismatch' | 'unknown-torch-npu';
  rows: MatrixRow[];
  /** Nearest valid combinations to suggest on a mismatch. */
  suggestions: MatrixRow[];
}

/** Where this torch_npu / CANN pair stands in the official matrix. */
export function judgeTorchNpuCann(k: Knowledge, torchNpu: string, cann: string): MatrixVerdict {
  const wheel = stripLocal(torchNpu);
  const rows = k.versions.matrix.filter((r) => r.torchNpu === wheel);
  const sameBase = rows.length
    ? rows
    : k.versions.matrix.filter((r) => baseRelease(r.torchNpu) === baseRelease(wheel));
  const sameCann = k.versions.matrix.filter((r) => normCann(r.cann) === normCann(cann));
  const suggestions = [
    ...sameCann.filter((r) => r.status === 'active'),
    ...sameBase.filter((r) => r.status === 'active'),
  ]
    .filter((r, i, all) => all.indexOf(r) === i)
    .slice(0, 6);
  if (!sameBase.length) return { kind: 'unknown-torch-npu', rows: [], suggestions };
  if (sameBase.some((r) => normCann(r.cann) === normCann(cann))) {
    return {
      kind: 'exact',
      rows: sameBase.filter((r) => normCann(r.cann) === normCann(cann)),
      suggestions: [],
    };
  }
  const products = new Set(sameBase.map(productOf));
  const compatible = k.versions.torchNpuCannFamilies.some(
    (f) =>
      f.torchNpuProduct.some((p) => products.has(p)) &&
      f.cann.some((c) => cannFamilyMatch(cann, c)),
  );
  return { kind: compatible ? 'compatible' : 'mismatch', rows: sameBase, suggestions };
}

/** Driver versions documented for a CANN release; null when the data does not cover it. */
export function driversFor(k: Knowledge, cann: string): string[] | null {
  const row = k.versions.cannDriver.find((r) => normCann(r.cann) === normCann(cann));
  return row ? row.driver : null;
}

/** `25.0.RC1.1` satisfies `25.0.RC1`; `25.3.0` satisfies `25.3`. */
export const driverMatches = (driver: string, wanted: string) => {
  const d = normDriver(driver);
  const w = normDriver(wanted);
  return d === w || d.startsWith(`${w}.`);
};

export const pythonsFor = (k: Knowledge, torch: string): string[] | null =>
  k.versions.pythonForTorch[baseRelease(torch)] ?? null;

/** `a.b.c` comparisons for the simple cases the checks need. */
export function versionLess(a: string, b: string): boolean {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10));
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = Number.isNaN(pa[i]) ? 0 : (pa[i] ?? 0);
    const y = Number.isNaN(pb[i]) ? 0 : (pb[i] ?? 0);
    if (x !== y) return x < y;
  }
  return false;
}
