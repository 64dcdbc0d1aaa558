import { printable } from '../parsers/printable';

/** Pieces every Markdown section uses: host text made inert, code spans, fences. */
/**
 * Text that came from a host, a repository or a person (host names, npu-smi cells, file names,
 * messages, comments), made inert in Markdown: renderers pass inline HTML through, so `<`, `>`
 * and `&` become entities, Markdown punctuation is backslash-escaped (no links, images or
 * emphasis injected), control characters are shown as escapes and line breaks as spaces.
 */
export const md = (s: unknown): string =>
  printable(String(s ?? '—').replace(/\r?\n/g, ' '))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_{}[\]()#+!|~]/g, '\\$&');

/** Table cells: the same, which also keeps pipes and line breaks from breaking the row. */
export const cell = (s: unknown) => md(s);

/** A code span that the text cannot close: its fence is longer than any backtick run inside. */
export const code = (s: unknown): string => {
  const text = printable(String(s ?? '').replace(/\r?\n/g, ' '));
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
};

/**
 * Rule and doctor texts, written with `code` spans: the spans kept as code (a pipe in one escaped,
 * as GFM tables want even there), the rest made inert.
 */
export const mdText = (s: unknown): string =>
  String(s ?? '—')
    .split(/`([^`\n]+)`/)
    .map((part, i) => (i % 2 ? code(part).replace(/\|/g, '\\|') : md(part)))
    .join('');

/** A fenced block whose fence no line of the content can match. */
export const fenceFor = (text: string) =>
  '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((r) => r.length + 1)));

/** Interpolation values for t(): escaped like any other text. */
export const esc = (params: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? md(v) : v]),
  );

export const MAX_ROWS = 200;

/**
 * One blank line between blocks, however many empty sections left: runs of blank lines outside
 * fenced blocks become one (a diff inside a fence keeps every line it has).
 */
export function tidyBlankLines(text: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    if (fence === null) {
      const open = /^(`{3,})/.exec(line);
      if (open) fence = open[1]!;
      else if (line.trim() === '' && (out.length === 0 || out[out.length - 1]!.trim() === ''))
        continue;
    } else if (line.trimEnd() === fence) fence = null;
    out.push(line);
  }
  return out.join('\n');
}
