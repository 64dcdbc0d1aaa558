import { printable, WarningList } from './printable';

/**
 * `npu-smi info -t common|usages|memory|board|…` print `<TAB>Label<padding> : value` lines in
 * blank-line separated blocks (a block per chip, one for the MCU). Version files are `key=value`.
 * Both parsers keep every value as the text npu-smi printed; `numberOf` reads one as a number.
 */

export interface KvParse {
  /** Blocks in order; a label may repeat across blocks (Temperature(C) of the chip and the MCU). */
  blocks: Record<string, string>[];
  warnings: string[];
}

/** Real lines are under 200 characters (version.cfg's lists under 2,000). */
const MAX_LINE = 8192;

export function parseNpuSmiKeyValue(text: string): KvParse {
  const blocks: Record<string, string>[] = [];
  const warnings = new WarningList();
  // a Map, then fromEntries: a label such as `__proto__` stays a plain key
  let current = new Map<string, string>();
  const flush = () => {
    if (current.size) blocks.push(Object.fromEntries(current));
    current = new Map();
  };
  text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .forEach((line, i) => {
      if (line.length > MAX_LINE) {
        warnings.push(`line ${i + 1}: ${line.length} characters long, not a "label : value" line`);
        return;
      }
      if (!line.trim()) return flush();
      if (/^\s*#/.test(line)) return; // a pasted prompt such as "# npu-smi info -t memory …"
      // `label : value`, split at the first whitespace-then-colon. Found with one linear search:
      // the regex /^\s*(.+?)\s+:/ backtracks quadratically on a long line without one.
      const at = line.search(/\s:/);
      const label = at < 0 ? '' : line.slice(0, at).trim();
      if (!label) {
        warnings.push(
          `line ${i + 1}: not a "label : value" line: ${printable(line.trim().slice(0, 80))}`,
        );
        return;
      }
      // A repeated label inside one block starts a new block (outputs without blank lines).
      if (current.has(label)) flush();
      current.set(label, line.slice(at + 2).trim());
    });
  flush();
  if (!blocks.length) warnings.push('no "label : value" lines found');
  return { blocks, warnings: warnings.done() };
}

/** A number from a printed value; null for NA, blanks and anything that is not plainly numeric. */
export function numberOf(value: string | undefined): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (/^0x[0-9a-f]+$/i.test(v)) return Number.parseInt(v, 16);
  return null;
}

/** `key=value` files (ascend_toolkit_install.info, version.info, version.cfg, ascend_install.info). */
export function parseKeyEqualsValue(text: string): {
  values: Record<string, string>;
  warnings: string[];
} {
  const values = new Map<string, string>();
  const warnings = new WarningList();
  text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .forEach((line, i) => {
      if (line.length > MAX_LINE) {
        warnings.push(`line ${i + 1}: ${line.length} characters long, not a key=value line`);
        return;
      }
      const t = line.trim();
      if (!t || t.startsWith('#')) return;
      const eq = t.indexOf('=');
      if (eq < 1) {
        warnings.push(`line ${i + 1}: not key=value: ${printable(t.slice(0, 80))}`);
        return;
      }
      values.set(
        t.slice(0, eq).trim(),
        t
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1'),
      );
    });
  return { values: Object.fromEntries(values), warnings: warnings.done() };
}
