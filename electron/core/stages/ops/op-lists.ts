import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { resourcesDir } from '../../paths';

const Index = z.object({
  lists: z.array(z.object({ torch: z.string().regex(/^\d+\.\d+\.\d+$/), tag: z.string() })).min(1),
  supportTable: z.string(),
});

let index: z.infer<typeof Index> | undefined;

/** The op lists this build carries (resources/knowledge/ops/index.json), validated once. */
export function opListIndex(): z.infer<typeof Index> {
  if (index) return index;
  const file = join(resourcesDir(), 'knowledge', 'ops', 'index.json');
  const parsed = Index.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `${file} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  index = parsed.data;
  return index;
}

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
  const LISTS = opListIndex().lists;
  const v = numeric(torchNpu).slice(0, 3);
  const exact = LISTS.find((l) => compare(numeric(l.torch), v) === 0);
  const older = [...LISTS].reverse().find((l) => compare(numeric(l.torch), v) <= 0);
  const pick = exact ?? older ?? LISTS[0]!;
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
  for (const line of readFileSync(join(dir, opListIndex().supportTable), 'utf8')
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
