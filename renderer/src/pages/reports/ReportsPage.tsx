import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { shownLanguage } from '../../i18n';
import { stageNs } from '../../../../shared/stages';
import {
  isWaivable,
  REPORT_FORMATS,
  type Language,
  type ReportFormat,
} from '../../../../shared/api';
import { useAction, useCall, useTransport } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { PageHead } from '../../components/PageHead';
import { FilePickButton } from '../../components/FilePickButton';
import { StartSteps } from '../StartPage';
import { uiDateTime } from '../../format';
import {
  checkTarget,
  findingTarget,
  reviewTargetText,
} from '../../../../shared/api/review-targets';

type Source = { sessionId: number } | { importId: number };
const REVIEWER_KEY = 'amw.reviewerName';

function save(fileName: string, mediaType: string, body: { text?: string; base64?: string }) {
  const bytes =
    body.base64 !== undefined
      ? Uint8Array.from(atob(body.base64), (c) => c.charCodeAt(0))
      : body.text!;
  const url = URL.createObjectURL(new Blob([bytes], { type: mediaType }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Reports: pick a session or an imported report, preview it, export it, review it. */
export function ReportsPage() {
  const { t, i18n } = useTranslation();
  const client = useQueryClient();
  const transport = useTransport();
  const sessions = useCall('sessions.list', {});
  const imported = useCall('reports.imported', {});
  const importReport = useAction('reports.import', ['reports.imported']);
  const [source, setSource] = useState<Source | null>(null);
  // the report's language follows the app's until one is picked here (then it stays picked)
  const [picked, setPicked] = useState<Language | null>(null);
  const language = picked ?? shownLanguage(i18n);
  const [hideNames, setHideNames] = useState(false);
  const [format, setFormat] = useState<ReportFormat>('html');
  const [exportError, setExportError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const sourceKey = source
    ? 'sessionId' in source
      ? `s${source.sessionId}`
      : `i${source.importId}`
    : '';
  const list = sessions.data ?? [];
  const imports = imported.data ?? [];
  if (sessions.data && imported.data && !list.length && !imports.length)
    return (
      <section className="page" data-testid="page-reports">
        <PageHead icon="reports" title={t('pages.reports.title')} />
        <div className="empty">
          <p className="lead">{t('pages.reports.lead')}</p>
          <StartSteps page="reports" />
        </div>
        <ImportButton onImport={(json) => importReport.mutate({ json })} />
        {importReport.error && <ErrorText error={importReport.error} />}
      </section>
    );
  return (
    <section className="page" data-testid="page-reports">
      <PageHead icon="reports" title={t('pages.reports.title')}>
        <div className="spacer" />
        <ImportButton
          onImport={(json) =>
            importReport.mutate({ json }, { onSuccess: (r) => setSource({ importId: r.id }) })
          }
        />
      </PageHead>
      {importReport.error && <ErrorText error={importReport.error} />}
      <form className="scan-form" onSubmit={(e) => e.preventDefault()}>
        <label className="grow">
          <span>{t('reports.source')}</span>
          <select
            data-testid="report-source"
            value={sourceKey}
            onChange={(e) => {
              const v = e.target.value;
              setSource(
                !v
                  ? null
                  : v[0] === 's'
                    ? { sessionId: Number(v.slice(1)) }
                    : { importId: Number(v.slice(1)) },
              );
            }}
          >
            <option value="">{t('reports.pick')}</option>
            <optgroup label={t('reports.sessions')}>
              {list.map((s) => (
                <option key={s.id} value={`s${s.id}`}>
                  #{s.id} {s.title}
                  {s.project ? t('common.paren', { text: s.project }) : ''}
                </option>
              ))}
            </optgroup>
            {imports.length > 0 && (
              <optgroup label={t('reports.imported')}>
                {imports.map((r) => (
                  <option key={r.id} value={`i${r.id}`}>
                    {t('reports.importedItem', {
                      title: r.title,
                      id: r.sessionId,
                      at: r.generatedAt.slice(0, 10),
                    })}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
        </label>
        <label>
          <span>{t('reports.language')}</span>
          <select
            data-testid="report-language"
            value={language}
            onChange={(e) => setPicked(e.target.value as Language)}
            disabled={!!source && 'importId' in source}
          >
            <option value="zh-CN">中文</option>
            <option value="en">English</option>
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={hideNames}
            onChange={(e) => setHideNames(e.target.checked)}
            data-testid="report-hide-names"
          />
          <span>{t('reports.hideNames')}</span>
        </label>
        <label>
          <span>{t('reports.format')}</span>
          <select
            data-testid="report-format"
            value={format}
            onChange={(e) => setFormat(e.target.value as ReportFormat)}
          >
            {REPORT_FORMATS.map((f) => (
              <option key={f} value={f}>
                {t(`reports.formats.${f}`)}
              </option>
            ))}
          </select>
        </label>
        <button
          className="primary"
          type="button"
          disabled={!source || busy}
          data-testid="report-export"
          onClick={() => {
            if (!source) return;
            setBusy(true);
            setExportError(null);
            transport
              .call('reports.export', { source, format, language, hideNames })
              .then((r) => save(r.fileName, r.mediaType, r), setExportError)
              .finally(() => setBusy(false));
          }}
        >
          {busy ? t('common.loading') : t('reports.export')}
        </button>
      </form>
      {exportError !== null && <ErrorText error={exportError} />}
      {source && 'importId' in source && <p className="notice small">{t('reports.readOnly')}</p>}
      {source && (
        <div className="report-layout">
          <Preview source={source} language={language} hideNames={hideNames} />
          <Review
            source={source}
            onChange={() => void client.invalidateQueries({ queryKey: ['reports.export'] })}
          />
        </div>
      )}
    </section>
  );
}

function ImportButton(props: { onImport: (json: string) => void }) {
  const { t } = useTranslation();
  return (
    <FilePickButton
      testId="report-import"
      accept="application/json,.json"
      onFile={(f) => void f.text().then(props.onImport)}
    >
      {t('reports.import')}
    </FilePickButton>
  );
}

/** The HTML export itself, in a sandboxed frame that may run nothing and load nothing. */
function Preview(props: { source: Source; language: Language; hideNames: boolean }) {
  const { t } = useTranslation();
  const html = useCall('reports.export', {
    source: props.source,
    format: 'html',
    language: props.language,
    hideNames: props.hideNames,
  });
  if (html.error) return <ErrorText error={html.error} />;
  if (!html.data) return <p className="muted">{t('common.loading')}</p>;
  return (
    <iframe
      className="report-preview"
      title={t('reports.preview')}
      sandbox=""
      srcDoc={html.data.text}
      data-testid="report-preview"
    />
  );
}

function Review(props: { source: Source; onChange: () => void }) {
  const { t, i18n } = useTranslation();
  // built in the language shown, so the checks' titles in the About list read in it too (an
  // imported report keeps the language it was written in)
  const report = useCall('reports.build', {
    source: props.source,
    language: shownLanguage(i18n),
  });
  const comment = useAction('reports.comment', ['reports.build']);
  const decide = useAction('reports.decide', ['reports.build']);
  const [name, setName] = useState(() => localStorage.getItem(REVIEWER_KEY) ?? '');
  const [target, setTarget] = useState('session');
  const [text, setText] = useState('');
  const r = report.data;
  // what a comment can be about, labelled as a reader knows it (the stored target is the id),
  // the check's or rule's id in the option's tooltip
  // grouped by stage and by file: one flat list of every check and finding was long to scan
  const checkTargets = new Map<string, Map<string, Target>>();
  const findingTargets = new Map<string, Map<string, Target>>();
  const group = (groups: Map<string, Map<string, Target>>, label: string) =>
    groups.get(label) ?? groups.set(label, new Map()).get(label)!;
  for (const s of r?.stages ?? [])
    for (const c of s.checks)
      if (isWaivable(c.status))
        group(
          checkTargets,
          t('reports.aboutChecksIn', {
            stage: t(`${stageNs(s.stage)}:name`, { defaultValue: s.stage }),
          }),
        ).set(checkTarget(c.id, s.host), {
          label: reviewTargetText(t, r!, checkTarget(c.id, s.host)),
          id: c.id,
        });
  for (const f of (r?.code?.findings ?? []).slice(0, 200))
    group(findingTargets, t('reports.aboutFindingsIn', { file: f.file })).set(
      findingTarget(f.ruleId, f.file, f.line),
      { label: reviewTargetText(t, r!, findingTarget(f.ruleId, f.file, f.line)), id: f.ruleId },
    );
  const targetLabel = (id: string) => (r ? reviewTargetText(t, r, id) : id);
  // the engine refuses both as well; here they are not offered, and the panel says why
  const unapprovable =
    r?.summary.readiness === 'blocked'
      ? t('reports.approveBlocked')
      : r?.summary.readiness === 'not-started'
        ? t('reports.approveNothingRan')
        : null;
  const reason = text.trim();
  const named = !!name.trim();
  // why a button is off, as its tooltip (the first thing missing)
  const missing = !named ? t('reports.nameNeeded') : null;
  const remember = () => localStorage.setItem(REVIEWER_KEY, name.trim());
  const done = () => props.onChange();
  // a decision is about the whole session: the About field goes back to saying so, rather than
  // keep naming the check the last comment was about
  const decided = () => (setText(''), setTarget('session'), done());
  return (
    <aside className="review-panel" data-testid="review-panel">
      <h2>{t('report.review')}</h2>
      {report.error && <ErrorText error={report.error} />}
      <ul className="comments" data-testid="review-comments">
        {r?.review.comments.map((c, i) => (
          <li key={`${c.id}-${i}`}>
            <span className="small muted" title={c.target}>
              {targetLabel(c.target)}
            </span>
            <div>
              <b>{c.author}</b> <span className="muted small">{uiDateTime(c.at)}</span>
            </div>
            <div>{c.text}</div>
          </li>
        ))}
        {r?.review.decisions.map((d, i) => (
          <li key={`d${d.id}-${i}`} data-testid="review-decision">
            <span className={`badge ${d.decision === 'approve' ? 'ok' : 'fail'}`}>
              {t(`report.decision.${d.decision}`)}
            </span>{' '}
            <b>{d.by}</b> <span className="muted small">{uiDateTime(d.at)}</span>
            {d.note && <div>{d.note}</div>}
          </li>
        ))}
      </ul>
      <label className="field stacked">
        <span>{t('reports.yourName')}</span>
        <input value={name} onChange={(e) => setName(e.target.value)} data-testid="review-name" />
      </label>
      <label className="field stacked">
        <span>{t('reports.about')}</span>
        <select
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          data-testid="review-target"
        >
          <option value="session">{t('reports.aboutSession')}</option>
          {[...checkTargets, ...findingTargets].map(([label, targets]) => (
            <TargetGroup key={label} label={label} targets={targets} />
          ))}
        </select>
      </label>
      <label className="field stacked">
        <span>{t('reports.comment')}</span>
        <textarea
          rows={3}
          value={text}
          onChange={(e) => setText(e.target.value)}
          data-testid="review-text"
        />
      </label>
      {(comment.error || decide.error) && <ErrorText error={comment.error ?? decide.error} />}
      <div className="row">
        <button
          disabled={!named || !text.trim()}
          title={missing ?? undefined}
          data-testid="review-add"
          onClick={() => {
            remember();
            comment.mutate(
              { source: props.source, target, author: name.trim(), text: text.trim() },
              { onSuccess: () => (setText(''), done()) },
            );
          }}
        >
          {t('reports.addComment')}
        </button>
        <button
          className="primary"
          disabled={!named || !r || !!unapprovable}
          title={missing ?? unapprovable ?? undefined}
          aria-describedby={unapprovable ? 'approve-unavailable' : undefined}
          data-testid="review-approve"
          onClick={() => {
            remember();
            decide.mutate(
              { source: props.source, decision: 'approve', by: name.trim(), note: text.trim() },
              // the text went with the decision as its note: cleared, as after a comment
              { onSuccess: decided },
            );
          }}
        >
          {t('reports.approve')}
        </button>
        <button
          disabled={!named || !reason}
          title={missing ?? (reason ? undefined : t('reports.reasonNeeded'))}
          data-testid="review-request-changes"
          onClick={() => {
            remember();
            decide.mutate(
              {
                source: props.source,
                decision: 'changes-requested',
                by: name.trim(),
                note: text.trim(),
              },
              { onSuccess: decided },
            );
          }}
        >
          {t('reports.requestChanges')}
        </button>
      </div>
      {target !== 'session' && (
        <p className="muted small" data-testid="decision-whole">
          {t('reports.decisionWhole')}
        </p>
      )}
      {unapprovable && (
        <p className="muted small" id="approve-unavailable" data-testid="approve-unavailable">
          {unapprovable}
        </p>
      )}
      {!named && (
        <p className="muted small" data-testid="name-needed">
          {t('reports.nameNeeded')}
        </p>
      )}
      {!reason && named && (
        <p className="muted small" data-testid="reason-needed">
          {t('reports.reasonNeeded')}
        </p>
      )}
    </aside>
  );
}

/** An entry of the review's "About" list: its words, and the check or rule id it names. */
interface Target {
  label: string;
  id: string;
}

/** One kind of thing a comment can be about, as a group of the review's "About" list. */
function TargetGroup(props: { label: string; targets: Map<string, Target> }) {
  if (!props.targets.size) return null;
  return (
    <optgroup label={props.label}>
      {[...props.targets].map(([value, target]) => (
        <option key={value} value={value} title={target.id}>
          {target.label}
        </option>
      ))}
    </optgroup>
  );
}
