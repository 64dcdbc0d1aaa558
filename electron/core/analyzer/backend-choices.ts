/**
 * Where a project with a kernel backend switch (analyze-file's BackendSwitch: `HammerKernel` with
 * TRITON / CUDA / PYTORCH members) chooses a GPU backend: the lines a porter edits to run the
 * PyTorch path on NPU. Read from the text, in every Python file of the switch's project: a
 * default, an assignment, a keyword argument, a return or a call's argument naming a GPU member
 * (`_DEFAULT = HammerKernel.TRITON`, `return HammerKernel.TRITON_CC`,
 * `set_hammer_kernel(HammerKernel.TRITON)`), and a string default of a setting named after the
 * enum (`hammer_kernel: str = "TRITON"`). Comparisons and dispatch tables only read the choice.
 */
import type { BackendSwitch } from './analyze-file';
import { newlineStarts } from './line-matches';

export interface BackendChoice {
  line: number;
  column: number;
  endColumn: number;
  /** The member's (or the string's) offsets in the file, and what replaces it. */
  start: number;
  end: number;
  replacement: string;
  /** As written: `HammerKernel.TRITON`, `"TRITON"`. */
  text: string;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `HammerKernel` → `hammer_kernel`. */
function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** What comes right before a choice: `=` (not `==`, `!=`, `<=`, `>=`), `return`, `else`, `f(`. */
const CHOOSING = /(?:(?<![=!<>])=|\breturn|\belse|\b\w+\()\s*$/;

export function backendChoices(source: string, sw: BackendSwitch): BackendChoice[] {
  if (!sw.gpu.length || !source.includes(sw.name)) return [];
  const out: BackendChoice[] = [];
  const starts = newlineStarts(source);
  const members = sw.gpu.map((m) => escape(m.member)).join('|');
  const reference = new RegExp(`\\b${escape(sw.name)}\\.(${members})\\b(?!\\s*\\.|\\s*\\()`, 'g');
  const values = sw.value ? sw.gpu.flatMap((m) => (m.value ? [escape(m.value)] : [])) : [];
  // `hammer_kernel: str = "TRITON"`, `self._hammer_kernel = "CUDA"`, `hammer_kernel="TRITON"`
  const setting = values.length
    ? new RegExp(
        `\\b\\w*${escape(snake(sw.name))}\\s*(?::\\s*[\\w.\\[\\], ]+)?=\\s*(["'])(${values.join('|')})\\1`,
        'g',
      )
    : null;
  const lines = source.split('\n');
  lines.forEach((line, i) => {
    if (/^\s*#/.test(line) || underCudaCheck(lines, i)) return;
    // [start, end) is shown; from `edit` to end is replaced
    const add = (start: number, end: number, edit: number, replacement: string) =>
      out.push({
        line: i + 1,
        column: start + 1,
        endColumn: end + 1,
        start: starts[i]! + edit,
        end: starts[i]! + end,
        replacement,
        text: line.slice(start, end),
      });
    for (const m of line.matchAll(reference)) {
      if (!CHOOSING.test(line.slice(0, m.index))) continue;
      const end = m.index! + m[0].length;
      add(m.index!, end, m.index! + sw.name.length + 1, sw.member);
    }
    if (setting)
      for (const m of line.matchAll(setting)) {
        const end = m.index! + m[0].length;
        const quoted = end - m[2]!.length - 2;
        add(quoted, end, quoted, `${m[1]}${sw.value}${m[1]}`);
      }
  });
  return out;
}

/**
 * The line's block is under `if torch.cuda.is_available():` / `if x.is_cuda …:` — a choice made
 * only on a CUDA device, already the PyTorch path's elsewhere.
 */
function underCudaCheck(lines: string[], i: number): boolean {
  const indent = /^\s*/.exec(lines[i]!)![0].length;
  for (let j = i - 1; j >= 0 && j >= i - 50; j--) {
    const line = lines[j]!;
    if (!line.trim() || /^\s*#/.test(line)) continue;
    if (/^\s*/.exec(line)![0].length < indent) return /^\s*(?:el)?if\b.*cuda/i.test(line);
  }
  return false;
}
