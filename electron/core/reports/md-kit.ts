/** Pieces every Markdown section uses. */
/** Table cells: pipes and line breaks would break the row. */
export const cell = (s: unknown) =>
  String(s ?? '—')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ');

export const MAX_ROWS = 200;
