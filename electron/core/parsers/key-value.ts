import { printable } from './printable';

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

export function parseNpuSmiKeyValue(text: string): KvParse {
  const blocks: Record<string, string>[] = [];
  const warnings: string[] = [];
  let current: Record<string, string> = {};
  const flush = () => {
    if (Object.keys(current).length) blocks.push(current);
    current = {};
  };
  text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return flush();
      if (/^\s*#/.test(line)) return; // a pasted prompt such as "# npu-smi info -t memory …"
      const m = /^\s*(.+?)\s+:\s?(.*)$/.exec(line);
      if (!m) {
        warnings.push(
          `line ${i + 1}: not a "label : value" line: ${printable(line.trim().slice(0, 80))}`,
        );
        return;
      }
      const key = m[1]!.trim();
      // A repeated label inside one block starts a new block (outputs without blank lines).
      if (key in current) flush();
      current[key] = m[2]!.trim();
    });
  flush();
  if (!blocks.length) warnings.push('no "label : value" lines found');
  return { blocks, warnings };
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
  const values: Record<string, string> = {};
  const warnings: string[] = [];
  text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .forEach((line, i) => {
      const t = line.trim();
      if (!t || t.startsWith('#')) return;
      const eq = t.indexOf('=');
      if (eq < 1) {
        warnings.push(`line ${i + 1}: not key=value: ${printable(t.slice(0, 80))}`);
        return;
      }
      values[t.slice(0, eq).trim()] = t
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
    });
  return { values, warnings };
}
