import { evidenceView, type EvidenceView } from '../../../shared/api/evidence';

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

/** A check's evidence as the app shows it: fields, word lists, record tables (all escaped). */
export function evidenceHtml(value: unknown, more: (count: number) => string): string {
  const rest = (n: number) => (n ? ` <span class="muted">${esc(more(n))}</span>` : '');
  const view = (v: EvidenceView): string => {
    switch (v.kind) {
      case 'text':
        return `<span class="ev-text">${esc(v.text)}</span>`;
      case 'list':
        return `${v.items.map((x) => `<code class="ev-item">${esc(x)}</code>`).join(' ')}${rest(v.more)}`;
      case 'table':
        return `<table class="ev"><tr>${v.columns.map((c) => `<th>${esc(c)}</th>`).join('')}${v.moreColumns ? `<th class="muted">${esc(more(v.moreColumns))}</th>` : ''}</tr>${v.rows.map((r) => `<tr>${r.map((x) => `<td>${esc(x)}</td>`).join('')}</tr>`).join('')}</table>${rest(v.more)}`;
      case 'fields':
        return `<dl class="ev">${v.fields.map(([k, x]) => `<dt>${esc(k)}</dt><dd>${view(x)}</dd>`).join('')}</dl>${rest(v.more)}`;
    }
  };
  return `<div class="evidence">${view(evidenceView(value))}</div>`;
}
