import type { CodeFinding, Text } from '../../../../shared/api';

/**
 * A finding's message and fix in the language shown now: from its keys where the scan stored
 * them, else the text it was worded in at scan time (scans stored before keys).
 */
export function findingText(
  f: CodeFinding,
  show: (text: Text | null | undefined) => string,
  join = ' → ',
): string {
  const message = f.text ? show(f.text.message) : f.message;
  const fix = f.text?.fix ? show(f.text.fix) : f.fix?.description;
  return fix ? `${message}${join}${fix}` : message;
}
