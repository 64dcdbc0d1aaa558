/**
 * A check's evidence (whatever JSON its stage stored) as something a reader can scan: fields as
 * a list, lists of words as a line, lists of records as a table. Renderers (the app's cards, the
 * HTML report) only draw this; nothing here is markup, so every text is escaped where drawn.
 */
export type EvidenceView =
  | { kind: 'text'; text: string }
  | { kind: 'list'; items: string[]; more: number }
  | { kind: 'table'; columns: string[]; rows: string[][]; more: number; moreColumns: number }
  | { kind: 'fields'; fields: [string, EvidenceView][]; more: number };

/** Enough to judge a check by; the rest is counted, not shown (evidence can be thousands long). */
const MAX_ITEMS = 30;
const MAX_ROWS = 50;
const MAX_FIELDS = 40;
const MAX_TEXT = 2000;
const MAX_DEPTH = 4;
const MAX_COLUMNS = 12;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => v === null || typeof v !== 'object';

/** One value as text: a scalar as written, anything deeper as compact JSON. */
function cellText(v: unknown): string {
  const s =
    v === null || v === undefined
      ? '—'
      : typeof v === 'string'
        ? v
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v);
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;
}

export function evidenceView(value: unknown, depth = 0): EvidenceView {
  if (isScalar(value) || depth >= MAX_DEPTH) return { kind: 'text', text: cellText(value) };
  if (Array.isArray(value)) {
    if (value.every(isScalar))
      return {
        kind: 'list',
        items: value.slice(0, MAX_ITEMS).map(cellText),
        more: Math.max(0, value.length - MAX_ITEMS),
      };
    if (value.length && value.every(isRecord)) {
      const all = [...new Set(value.flatMap((r) => Object.keys(r)))];
      const columns = all.slice(0, MAX_COLUMNS);
      return {
        kind: 'table',
        columns,
        // a record's own fields only: `constructor` is no column of one that lacks it
        rows: value
          .slice(0, MAX_ROWS)
          .map((r) => columns.map((c) => cellText(Object.hasOwn(r, c) ? r[c] : undefined))),
        more: Math.max(0, value.length - MAX_ROWS),
        moreColumns: all.length - columns.length,
      };
    }
    return {
      kind: 'list',
      items: value.slice(0, MAX_ITEMS).map(cellText),
      more: Math.max(0, value.length - MAX_ITEMS),
    };
  }
  const entries = Object.entries(value as Record<string, unknown>);
  return {
    kind: 'fields',
    fields: entries.slice(0, MAX_FIELDS).map(([k, v]) => [k, evidenceView(v, depth + 1)]),
    more: Math.max(0, entries.length - MAX_FIELDS),
  };
}

/** Whether there is anything to show: no Evidence section for null, `{}` or `[]`. */
export const hasEvidence = (value: unknown): boolean =>
  value !== null &&
  value !== undefined &&
  !(Array.isArray(value) && !value.length) &&
  !(isRecord(value) && !Object.keys(value).length);
