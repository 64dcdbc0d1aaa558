/**
 * Where a project with a kernel backend switch (analyze-file's BackendSwitch: `HammerKernel` with
 * TRITON / CUDA / PYTORCH members) chooses a GPU backend: the lines a porter edits to run the
 * PyTorch path on NPU. Read from the text, in every Python file of the switch's project: a
 * default, an assignment, a keyword argument, a return or a setter's argument naming a GPU member
 * (`_DEFAULT = HammerKernel.TRITON`, `return HammerKernel.TRITON_CC`,
 * `set_hammer_kernel(HammerKernel.TRITON)`), and a string default of a setting named after the
 * enum (`hammer_kernel: str = "TRITON"`). Comparisons, dispatch tables and registrations only
 * read the choice.
 */
import { CUDA_TEST, escape, type BackendSwitch } from './analyze-file';
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

/** `HammerKernel` → `hammer_kernel`. */
function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * What comes right before a choice: `=` (not `==`, `!=`, `<=`, `>=`), `return`, `else`, a
 * setter's parenthesis (`set_hammer_kernel(`); not any call's (`@register(K.TRITON)`, a lookup).
 */
const CHOOSING = /(?:(?<![=!<>])=|\breturn|\belse|\b(?:set|use|select|choose)_\w*\()\s*$/;

export function backendChoices(source: string, sw: BackendSwitch): BackendChoice[] {
  if (!sw.gpu.length || !source.includes(sw.name)) return [];
  const out: BackendChoice[] = [];
  const starts = newlineStarts(source);
  const members = sw.gpu.map((m) => escape(m.member)).join('|');
  const reference = new RegExp(`\\b${escape(sw.name)}\\.(${members})\\b(?!\\s*\\.|\\s*\\()`, 'g');
  const values = sw.value ? sw.gpu.flatMap((m) => (m.value ? [escape(m.value)] : [])) : [];
  // `hammer_kernel: str = "TRITON"`, `self._hammer_kernel = "CUDA"`, `hammer_kernel="TRITON"`:
  // the setting's own name (`device_backend` is another setting)
  const setting = values.length
    ? new RegExp(
        `(?<![\\w.])(?:\\w+\\.)*_?${escape(snake(sw.name))}\\s*(?::\\s*[\\w.\\[\\]]+\\s*)?=\\s*(["'])(${values.join('|')})\\1`,
        'g',
      )
    : null;
  const lines = source.split('\n');
  let inDocstring = false;
  lines.forEach((line, i) => {
    // a docstring's lines, and the lines that open or close one, show code; they run none
    const quotes = line.match(/"""|'''/g)?.length ?? 0;
    const skip = inDocstring || quotes > 0;
    if (quotes % 2) inDocstring = !inDocstring;
    if (skip || /^\s*[#@]/.test(line)) return;
    const code = codeEnd(line);
    // [start, end) is shown; from `edit` to end is replaced
    const add = (start: number, end: number, edit: number, replacement: string) => {
      if (end > code || underCudaCheck(lines, i, start)) return;
      out.push({
        line: i + 1,
        column: start + 1,
        endColumn: end + 1,
        start: starts[i]! + edit,
        end: starts[i]! + end,
        replacement,
        text: line.slice(start, end),
      });
    };
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

/** Where a line's comment starts (its length if none): the first `#` outside a string. */
function codeEnd(line: string): number {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#') return i;
  }
  return line.length;
}

/** An `if` / `elif` header that tests for CUDA itself (not its absence). */
const CUDA_IF = (header: string) =>
  /^\s*(?:el)?if\b/.test(header) && CUDA_TEST.test(header) && !NOT_CUDA.test(header);
/** CUDA's absence tested: `not x.is_cuda`, `not torch.cuda.is_available()`, `!= "cuda"`. */
const NOT_CUDA = /\bnot\s+[\w.]*(?:is_cuda|cuda\s*\.\s*is_available)\b|!=\s*["']cuda["']/;

/**
 * The choice at `column` is made only where CUDA is: under `if torch.cuda.is_available():`,
 * `if x.is_cuda:` (or after one on the same line); the NPU takes the PyTorch path already.
 */
function underCudaCheck(lines: string[], i: number, column: number): boolean {
  const line = lines[i]!;
  const head = line.slice(0, column);
  if (/^\s*(?:el)?if\b/.test(head) && head.includes(':')) return CUDA_IF(head);
  const indent = /^\s*/.exec(line)![0].length;
  for (let j = i - 1; j >= 0 && j >= i - 50; j--) {
    const above = lines[j]!;
    if (!above.trim() || /^\s*#/.test(above)) continue;
    if (/^\s*/.exec(above)![0].length < indent) return CUDA_IF(above);
  }
  return false;
}
