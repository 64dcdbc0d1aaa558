import type { Msg } from '../../../../../shared/api/text';
import { ct } from './text';

export interface HcclTestRow {
  bytes: number;
  us: number;
  algBandwidthGBs: number;
  check: 'success' | 'failed' | 'NULL';
}

export interface HcclTestOutput {
  /** The table header was found (the root rank printed its table). */
  table: boolean;
  rows: HcclTestRow[];
  warnings: Msg[];
}

// the binary prints `aveg_time(us):`, the official doc sample `avg_time(us):` (knowledge §4.3;
// its suggested `a(?:ve)?g_time` misses `avg`)
const HEADER =
  /data_size\(Bytes\):\s*\|\s*a(?:ve|v)g_time\(us\):\s*\|\s*alg_bandwidth\(GB\/s\):\s*\|\s*check_result:/;
const CHECK = new Set(['success', 'failed', 'NULL']);

/**
 * hccl_test's result table (`data_size | aveg_time | alg_bandwidth | check_result`, printed by the
 * root rank only). A line after the header that is not a row is skipped with its line and column
 * named; a row whose check is `failed` is kept and said so.
 */
export function parseHcclTestOutput(text: string): HcclTestOutput {
  const out: HcclTestOutput = { table: false, rows: [], warnings: [] };
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (HEADER.test(line)) {
      out.table = true;
      continue;
    }
    if (!out.table || !line.includes('|')) continue;
    const fields = line.split('|');
    const bad = (field: number) => {
      const column = fields.slice(0, field).reduce((n, f) => n + f.length + 1, 0) + 1;
      out.warnings.push(
        ct('note.badRow', { line: i + 1, column, text: line.trim().slice(0, 120) }),
      );
    };
    if (fields.length !== 4) {
      bad(0);
      continue;
    }
    const [b, t, a, c] = fields.map((f) => f.trim()) as [string, string, string, string];
    if (!/^\d+$/.test(b)) {
      bad(0);
      continue;
    }
    const nums = [t, a].map((s) => (/^\d+(?:\.\d+)?$/.test(s) ? Number(s) : NaN));
    if (Number.isNaN(nums[0])) {
      bad(1);
      continue;
    }
    if (Number.isNaN(nums[1])) {
      bad(2);
      continue;
    }
    if (!CHECK.has(c)) {
      bad(3);
      continue;
    }
    const row: HcclTestRow = {
      bytes: Number(b),
      us: nums[0]!,
      algBandwidthGBs: nums[1]!,
      check: c as HcclTestRow['check'],
    };
    if (row.check === 'failed')
      out.warnings.push(ct('note.rowFailed', { line: i + 1, result: c, bytes: row.bytes }));
    out.rows.push(row);
  }
  return out;
}
