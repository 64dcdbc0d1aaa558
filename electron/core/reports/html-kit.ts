/** Pieces every HTML section uses: escaping, status pills, inline SVG bars, diff blocks. */
export const esc = (s: unknown) =>
  String(s ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** Escaped text whose `code` spans (rule and doctor texts are written Markdown-style) show as code. */
export const escText = (s: unknown) => esc(s).replace(/`([^`\n]+)`/g, '<code>$1</code>');

export const MAX_ROWS = 400;

/** Status pill; colours come from the stylesheet below, nothing is fetched. */
export const pill = (status: string, label = status) =>
  `<span class="pill s-${esc(status)}">${esc(label)}</span>`;

/** A horizontal stacked bar as inline SVG (prints as vectors). */
export function bar(parts: { label: string; value: number; cls: string }[]): string {
  const total = parts.reduce((n, p) => n + p.value, 0) || 1;
  let x = 0;
  const rects = parts
    .map((p) => {
      const w = (100 * p.value) / total;
      const r = `<rect x="${x.toFixed(2)}" y="0" width="${w.toFixed(2)}" height="8" class="${p.cls}"><title>${esc(p.label)}: ${p.value}</title></rect>`;
      x += w;
      return r;
    })
    .join('');
  const legend = parts
    .map(
      (p) =>
        `<span class="legend"><i class="sw ${p.cls}"></i>${esc(p.label)} <b>${p.value}</b></span>`,
    )
    .join(' ');
  return `<svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img">${rects}</svg><div class="legends">${legend}</div>`;
}

export function diffBlock(patch: string): string {
  return `<pre class="diff">${patch
    .split('\n')
    .map((l) => {
      const cls =
        l.startsWith('+++') || l.startsWith('---')
          ? 'h'
          : l.startsWith('+')
            ? 'a'
            : l.startsWith('-')
              ? 'd'
              : l.startsWith('@@')
                ? 'h'
                : '';
      return cls ? `<span class="${cls}">${esc(l)}</span>` : esc(l);
    })
    .join('\n')}</pre>`;
}
