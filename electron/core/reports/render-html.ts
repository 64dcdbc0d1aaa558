import type { Report } from '../../../shared/api';
import { engineTranslator } from '../i18n';
import { INVENTORY_COLUMNS } from '../../../shared/api/hosts';
import {
  CHANGE_CLASS,
  changeLines,
  checkCounts,
  stageName,
  statusText,
  timeText,
  toolName,
} from './words';
import { STAGE_DEFINITIONS } from '../stages/registry';
import { checkTarget, hostWord, reviewTargetText } from '../../../shared/api/review-targets';
import { bar, esc, escText, evidenceHtml, pill } from './html-kit';
import { hasEvidence } from '../../../shared/api/evidence';
import { isWaived } from '../../../shared/api/stages';

const CSS = `
:root{--ok:#1a7f37;--warn:#9a6700;--fail:#cf222e;--info:#0969da;--muted:#5d6878;--border:#d0d7de;font-family:system-ui,-apple-system,"Segoe UI","PingFang SC","Microsoft YaHei","Noto Sans CJK SC","WenQuanYi Micro Hei",sans-serif;font-size:14px;line-height:1.5;color:#1c2330}
body{max-width:1100px;margin:24px auto;padding:0 24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--border);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.muted{color:var(--muted)}.small{font-size:12px}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{border:1px solid var(--border);padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}
.pill{display:inline-block;padding:0 8px;border-radius:10px;border:1px solid currentColor;font-size:12px;white-space:nowrap}
.s-pass,.s-ready,.s-direct{color:var(--ok)}.s-warn,.s-in-progress,.s-cpu-fallback{color:var(--warn)}.s-fail,.s-error,.s-blocked,.s-unsupported,.s-regressed{color:var(--fail)}.s-skip,.s-not-run,.s-not-started,.s-cancelled,.s-interrupted{color:var(--muted)}.s-needs-change{color:var(--info)}.s-waived{color:#8250df}
.banner{padding:10px 14px;border:2px solid currentColor;border-radius:8px;font-size:16px;font-weight:600;margin:12px 0}
.bar{width:100%;height:14px;display:block;border-radius:3px}.legends{font-size:12px;margin:4px 0 10px}.legend{margin-right:14px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
rect.c-direct,.sw.c-direct,rect.c-pass,.sw.c-pass{fill:var(--ok);background:var(--ok)}rect.c-needs,.sw.c-needs{fill:var(--info);background:var(--info)}rect.c-fallback,.sw.c-fallback,rect.c-warn,.sw.c-warn{fill:var(--warn);background:var(--warn)}rect.c-unsupported,.sw.c-unsupported,rect.c-fail,.sw.c-fail{fill:var(--fail);background:var(--fail)}rect.c-skip,.sw.c-skip{fill:#8c959f;background:#8c959f}rect.c-waived,.sw.c-waived{fill:#8250df;background:#8250df}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:8px;border-radius:6px;font-size:12px;margin:4px 0}
pre.diff .a{color:var(--ok)}pre.diff .d{color:var(--fail)}pre.diff .h{color:var(--info)}
td.differs{background:#fff8c5}
details summary{cursor:pointer;color:var(--info)}
dl.ev{margin:4px 0;display:grid;grid-template-columns:max-content 1fr;gap:0 10px;font-size:12px}dl.ev dt{color:var(--muted);font-family:ui-monospace,monospace}dl.ev dd{margin:0;overflow-wrap:anywhere}table.ev{font-size:12px;margin:2px 0}table.ev th,table.ev td{padding:1px 8px 1px 0;border:none}.ev-text{white-space:pre-wrap}.ev-item{display:inline-block;padding:0 5px;margin:0 2px 2px 0;border:1px solid var(--border);border-radius:4px}
.sign td{height:36px}
@media print{body{margin:0;max-width:none}details{display:block}details>summary{display:none}h2{break-after:avoid}tr,pre{break-inside:avoid}a{color:inherit}}
`;

/** One self-contained HTML file: inline CSS and SVG, no script, nothing loaded from a network. */
export function renderHtml(r: Report): string {
  // the stages' own namespaces too: each stage's section renders its own keys
  const t = engineTranslator(r.language);
  const colon = t('common.colon');
  const paren = (text: string) => t('common.paren', { text });
  const host = (h: string) => hostWord(t, h);
  const about = (check: string, h: string) => reviewTargetText(t, r, checkTarget(check, h));
  const change = (x: { from: string | null; to: string | null }) =>
    `${x.from ? st(x.from) : '—'} → ${x.to ? st(x.to) : '—'}`;
  const st = (x: string) => statusText(t, x);
  const out: string[] = [];
  const h = (s: string) => out.push(s);
  h(`<!doctype html><html lang="${esc(r.language)}"><head><meta charset="utf-8">`);
  h(`<meta name="viewport" content="width=device-width, initial-scale=1">`);
  h(
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
  );
  h(
    `<title>${esc(t('report.title'))} · ${esc(r.session.title)}</title><style>${CSS}</style></head><body>`,
  );
  h(`<header><h1>${esc(t('report.title'))}${colon}${esc(r.session.title)}</h1>`);
  h(
    `<div class="muted">${esc(t('report.session'))} #${r.session.id} · ${esc(t('report.project'))}${colon}${esc(r.session.project ?? t('report.adHoc'))}${r.session.codeCommit ? ` · git ${esc(r.session.codeCommit.slice(0, 12))}` : ''} · ${esc(t('report.generated', { at: timeText(r.generatedAt), tool: toolName(t, r), version: r.generator.version }))}</div>`,
  );
  if (r.namesHidden) h(`<div class="muted small">${esc(t('report.namesHidden'))}</div>`);
  h(
    `<div class="banner s-${r.summary.readiness}" data-readiness="${r.summary.readiness}">${esc(t(`report.readiness.${r.summary.readiness}`))}</div></header>`,
  );

  // summary
  h(
    `<section id="summary"><h2>${esc(t('report.summary'))}</h2><table><tr><th>${esc(t('report.stage'))}</th><th>${esc(t('report.status'))}</th><th>${esc(t('report.hosts'))}</th></tr>`,
  );
  for (const s of r.summary.stages)
    h(
      `<tr><td>${esc(stageName(r, s.stage))}</td><td>${pill(s.status, st(s.status))}</td><td>${s.hosts.map((x) => `${esc(host(x.host))} ${pill(x.status, t(`sessions.status.${x.status}`))}`).join(' ')}</td></tr>`,
    );
  h(`</table>`);
  // a waived failure is neither red nor gone: it has its own part of the bar
  h(bar(checkCounts(t, r).map((c) => ({ label: c.label, value: c.value, cls: `c-${c.key}` }))));
  h(`<h3>${esc(t('report.blocking'))}</h3>`);
  if (!r.summary.blocking.length) h(`<p>${esc(t('report.nothingBlocks'))}</p>`);
  else
    h(
      `<ul>${r.summary.blocking.map((b) => `<li><b>${esc(b.title)}</b> — ${esc(host(b.host))}${paren(esc(stageName(r, b.stage)))}${colon}${escText(b.summary)} <code class="muted">${esc(b.check)}</code></li>`).join('')}</ul>`,
    );
  h(`<h3>${esc(t('report.waivers'))}</h3>`);
  if (!r.summary.waivers.length) h(`<p>${esc(t('report.noWaivers'))}</p>`);
  else
    h(
      `<ul>${r.summary.waivers.map((w) => `<li>${esc(about(w.check, w.host))}${colon}${esc(t('report.waivedBy', { by: w.by, at: timeText(w.at), reason: w.reason }))}</li>`).join('')}</ul>`,
    );
  if (r.changes) {
    h(`<h3>${esc(t('report.changes', { id: r.changes.previousSessionId }))}</h3>`);
    const lines = changeLines(r.changes);
    if (!lines.length) h(`<p>${esc(t('report.noChanges'))}</p>`);
    else
      h(
        `<ul>${lines
          .map((x) => {
            const what =
              'check' in x
                ? `${esc(about(x.check, x.host))}${paren(esc(change(x)))}`
                : `${esc(stageName(r, x.stage))} — ${esc(host(x.host))}${colon}${esc(x.titles.join(t('common.join.list')))}`;
            return `<li><b class="${CHANGE_CLASS[x.kind]}">${esc(t(`report.change.${x.kind}`))}</b>${colon}${what}</li>`;
          })
          .join('')}</ul>`,
      );
  }
  h(`</section>`);

  // hosts
  if (r.inventories.length) {
    const cols = INVENTORY_COLUMNS;
    h(
      `<section id="hosts"><h2>${esc(t('report.inventories'))}</h2><table><tr><th>${esc(t('report.hosts'))}</th>${cols.map((c) => `<th>${esc(t(`report.inventory.${c}`))}</th>`).join('')}</tr>`,
    );
    for (const inv of r.inventories)
      h(
        `<tr><td>${esc(host(inv.host))}</td>${cols.map((c) => `<td${inv.differs.includes(c) ? ` class="differs" title="${esc(t('report.differs'))}"` : ''}>${esc(inv[c] ?? '—')}</td>`).join('')}</tr>`,
      );
    h(`</table></section>`);
  }

  // checks of every stage run
  h(`<section id="checks"><h2>${esc(t('report.checks'))}</h2>`);
  for (const st of r.stages) {
    h(
      `<h3>${esc(stageName(r, st.stage))} — ${esc(host(st.host))} ${pill(st.status, t(`sessions.status.${st.status}`))}</h3>`,
    );
    h(
      `<table><tr><th>${esc(t('report.check'))}</th><th>${esc(t('report.status'))}</th><th>${esc(t('report.message'))}</th></tr>`,
    );
    for (const c of st.checks) {
      const evidence = !hasEvidence(c.evidence)
        ? ''
        : `<details><summary>${esc(t('report.evidence'))}</summary>${evidenceHtml(c.evidence, (count) => t('common.more', { count }))}</details>`;
      h(
        `<tr data-check="${esc(c.id)}"><td><code>${esc(c.id)}</code><br>${esc(c.title)}</td><td>${isWaived(c) ? pill('waived', t('sessions.waivedStatus', { status: t(`sessions.status.${c.status}`) })) : pill(c.status, t(`sessions.status.${c.status}`))}</td><td>${escText(c.summary)}${c.remediation && c.status !== 'pass' ? `<div class="small"><b>${esc(t('report.remediation'))}</b>${colon}${escText(c.remediation)}</div>` : ''}${c.waiver ? `<div class="small muted">${esc(t('report.waivedBy', { by: c.waiver.by, at: timeText(c.waiver.at), reason: c.waiver.reason }))}</div>` : ''}${(c.diagnosis ?? []).map((d) => `<div class="small"><b>${esc(t('report.diagnosis'))}</b>${colon}${esc(d.title)} — ${escText(d.cause)} → ${escText(d.fix)}</div>`).join('')}${evidence}</td></tr>`,
      );
    }
    h(`</table>`);
  }
  h(`</section>`);

  // each stage's own section, in the stages' order, with its own namespace to word it in
  for (const d of STAGE_DEFINITIONS) {
    const section = d.report && (r as Record<string, unknown>)[d.shared.report!.key];
    if (d.report && section !== undefined && section !== null) h(d.report.html(section, t));
  }

  // review and sign-off
  h(
    `<section id="review"><h2>${esc(t('report.review'))}</h2><h3>${esc(t('report.comments'))}</h3>`,
  );
  if (!r.review.comments.length) h(`<p>${esc(t('report.noComments'))}</p>`);
  else
    h(
      `<ul>${r.review.comments.map((c) => `<li>${esc(reviewTargetText(t, r, c.target))} — <b>${esc(c.author)}</b>${paren(esc(timeText(c.at)))}${colon}${esc(c.text)}</li>`).join('')}</ul>`,
    );
  h(`<h3>${esc(t('report.decisions'))}</h3>`);
  if (!r.review.decisions.length) h(`<p>${esc(t('report.noDecisions'))}</p>`);
  else
    h(
      `<ul>${r.review.decisions.map((d) => `<li>${pill(d.decision === 'approve' ? 'pass' : 'fail', t(`report.decision.${d.decision}`))} <b>${esc(d.by)}</b>${paren(esc(timeText(d.at)))}${d.note ? `${colon}${esc(d.note)}` : ''}</li>`).join('')}</ul>`,
    );
  h(
    `<h3>${esc(t('report.signOff'))}</h3><table class="sign"><tr><th>${esc(t('report.role'))}</th><th>${esc(t('report.name'))}</th><th>${esc(t('report.date'))}</th><th>${esc(t('report.signature'))}</th></tr>`,
  );
  for (const role of ['porter', 'reviewer', 'owner'])
    h(`<tr><td>${esc(t(`report.roles.${role}`))}</td><td></td><td></td><td></td></tr>`);
  h(`</table></section></body></html>\n`);
  return out.join('\n');
}
