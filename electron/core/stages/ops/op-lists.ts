import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resourcesDir } from '../../paths';

/** The op lists this build carries, by the torch_npu release line they describe. */
const LISTS = [
  { torch: '2.1.0', tag: 'torch2.1.0_v7.2.0' },
  { torch: '2.7.1', tag: 'torch2.7.1_v7.3.0' },
  { torch: '2.9.0', tag: 'torch2.9.0_v26.1.0' },
] as const;

export interface OpList {
  /** e.g. torch2.7.1_v7.3.0 */
  tag: string;
  /** `name` (default overload) and `name.overload` with an NPU kernel. */
  native: Set<string>;
  /** torch APIs Ascend's table marks ✘ on Atlas A2 training, and the notes that limit others. */
  support: Map<string, { a2: boolean; note: string }>;
  /** Why this list was picked for the asked version (exact, or the nearest one). */
  note: string | null;
}

const numeric = (v: string) =>
  v
    .replace(/[^0-9.].*$/, '')
    .split('.')
    .map((n) => Number(n) || 0);
const compare = (a: number[], b: number[]) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d;
  }
  return 0;
};

const cache = new Map<string, OpList>();

/**
 * The list for a torch_npu version: the one for its torch line (2.7.1.post8 → torch2.7.1), else
 * the nearest older one (said in `note`), else the oldest.
 */
export function opListFor(torchNpu: string): OpList {
  const v = numeric(torchNpu).slice(0, 3);
  const exact = LISTS.find((l) => compare(numeric(l.torch), v) === 0);
  const older = [...LISTS].reverse().find((l) => compare(numeric(l.torch), v) <= 0);
  const pick = exact ?? older ?? LISTS[0];
  const note = exact
    ? null
    : `No op list for torch_npu ${torchNpu} in this build; using the nearest, ${pick.tag}.`;
  const hit = cache.get(pick.tag);
  if (hit) return { ...hit, note };
  const dir = join(resourcesDir(), 'knowledge', 'ops');
  const native = new Set(
    readFileSync(join(dir, `npu_native_ops_${pick.tag}.txt`), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  );
  const support = new Map<string, { a2: boolean; note: string }>();
  for (const line of readFileSync(join(dir, 'torch_api_npu_support_2.7.1.tsv'), 'utf8')
    .split('\n')
    .slice(1)) {
    const cols = line.split('\t');
    if (cols.length < 7 || !cols[0]) continue;
    support.set(cols[0], { a2: cols[2] !== '✘', note: cols[6]!.trim() });
  }
  const list = { tag: pick.tag, native, support, note: null };
  cache.set(pick.tag, list);
  return { ...list, note };
}
