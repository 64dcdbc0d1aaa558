import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { shownLanguage } from '../../i18n';
import type { DoctorMatch, DoctorProof, Input } from '../../../../shared/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { stageNs } from '../../../../shared/stages';
import { InlineCode } from '../../components/InlineCode';
import { FilePickButton } from '../../components/FilePickButton';
import { PageHead } from '../../components/PageHead';

/** A picked file is read in the page and sent as text: one request stays under serve mode's cap. */
const MAX_PICKED_BYTES = 700_000;

type Request = Omit<Input<'doctor.diagnose'>, 'lang'>;

function Proof(props: { proof: DoctorProof }) {
  const { t } = useTranslation();
  const { stage, check, command } = props.proof;
  const parts = [
    // the stage by its name in the language shown (an unknown id as it is)
    stage &&
      t('doctor.proofStage', { stage: t(`${stageNs(stage)}:name`, { defaultValue: stage }) }),
    check && t('doctor.proofCheck', { check }),
    command && t('doctor.proofCommand', { command }),
  ].filter(Boolean);
  if (!parts.length) return null;
  return (
    <div>
      <strong>{t('doctor.proof')}</strong>
      {t('common.colon')}
      <InlineCode text={parts.join(' · ')} />
    </div>
  );
}

function MatchCard(props: { m: DoctorMatch; n: number }) {
  const { t } = useTranslation();
  const { m } = props;
  return (
    <li className="card" data-testid="doctor-match" data-rule={m.rule}>
      <div className="row">
        <span className={`sev ${m.severity}`}>{t(`doctor.severity.${m.severity}`)}</span>
        <span className="badge">{t(`doctor.category.${m.category}`)}</span>
        <strong>
          {props.n}. {m.title}
        </strong>
        <span className="muted small">
          {m.file ? `${m.file} · ` : ''}
          {t('doctor.line', { line: m.line })} · {m.rule}
        </span>
      </div>
      <pre className="evidence" data-testid="doctor-line">
        {m.text}
      </pre>
      <div>
        <strong>{t('doctor.cause')}</strong>
        {t('common.colon')}
        <span data-testid="doctor-cause">
          <InlineCode text={m.cause} />
        </span>
      </div>
      <div>
        <strong>{t('doctor.fix')}</strong>
        {t('common.colon')}
        <span data-testid="doctor-fix">
          <InlineCode text={m.fix} />
        </span>
      </div>
      <Proof proof={m.proof} />
      {m.links.length > 0 && (
        <div className="small">
          {t('doctor.links')}
          {t('common.colon')}
          {m.links.map((l, i) => (
            <span key={l.url}>
              {i > 0 && ', '}
              <a href={l.url} target="_blank" rel="noreferrer noopener">
                {l.title}
              </a>
            </span>
          ))}
        </div>
      )}
    </li>
  );
}

/** Paste a log, pick a file or name a path: every known failure in order, in the UI language. */
export function DoctorPage() {
  const { t, i18n } = useTranslation();
  const lang = shownLanguage(i18n);
  const [text, setText] = useState('');
  const [path, setPath] = useState('');
  const [tail, setTail] = useState<{ size: number; kept: number } | null>(null);
  const [request, setRequest] = useState<Request | null>(null);
  const result = useCall(
    'doctor.diagnose',
    { ...(request ?? { text: '' }), lang } as Input<'doctor.diagnose'>,
    {
      enabled: request !== null,
    },
  );

  const pick = async (file: File) => {
    const big = file.size > MAX_PICKED_BYTES;
    const body = await (big ? file.slice(file.size - MAX_PICKED_BYTES) : file).text();
    setTail(big ? { size: file.size, kept: MAX_PICKED_BYTES } : null);
    setText(body);
    setRequest({ text: body });
  };

  const r = result.data;
  return (
    <section className="page" data-testid="page-doctor">
      <PageHead icon="doctor" title={t('doctor.title')} />
      <p className="lead">{t('doctor.intro')}</p>
      <form
        className="scan-form"
        onSubmit={(e) => {
          e.preventDefault();
          setTail(null);
          setRequest({ text });
        }}
      >
        <label className="grow">
          <span>{t('doctor.paste')}</span>
          <textarea
            data-testid="doctor-text"
            rows={10}
            spellCheck={false}
            value={text}
            maxLength={900_000}
            placeholder={t('doctor.placeholder')}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        <div className="row">
          <button
            type="submit"
            className="primary"
            data-testid="doctor-run"
            disabled={!text.trim()}
          >
            {t('doctor.diagnose')}
          </button>
          <FilePickButton testId="doctor-pick" onFile={(f) => void pick(f)}>
            {t('doctor.pick')}
          </FilePickButton>
          {/* nothing typed and nothing shown: nothing to clear */}
          <button
            type="button"
            data-testid="doctor-clear"
            disabled={!text && !request}
            onClick={() => {
              setText('');
              setRequest(null);
              setTail(null);
            }}
          >
            {t('doctor.clear')}
          </button>
        </div>
      </form>
      <form
        className="scan-form"
        onSubmit={(e) => {
          e.preventDefault();
          setTail(null);
          setRequest({ path: path.trim() });
        }}
      >
        <label className="grow">
          <span>{t('doctor.path')}</span>
          <input
            data-testid="doctor-path"
            value={path}
            placeholder={t('doctor.pathPlaceholder')}
            onChange={(e) => setPath(e.target.value)}
          />
        </label>
        <button type="submit" data-testid="doctor-run-path" disabled={!path.trim()}>
          {t('doctor.diagnosePath')}
        </button>
      </form>
      {tail && (
        <p className="notice warn">
          {t('doctor.tail', {
            size: (tail.size / 1e6).toFixed(1),
            kept: (tail.kept / 1e6).toFixed(1),
          })}
        </p>
      )}
      {result.error && <ErrorText error={result.error} />}
      {request && result.isFetching && !r && <p className="muted">…</p>}
      {r && request && (
        <div data-testid="doctor-result">
          <p className="muted" data-testid="doctor-summary">
            {t('doctor.summary', {
              matches: t('doctor.summaryMatches', { count: r.matches.length }),
              unmatched: t('doctor.summaryUnmatched', { count: r.unmatched.length }),
              lines: t('doctor.summaryLines', { count: r.stats.lines }),
            })}
          </p>
          {r.notices.map((n, i) => (
            <p key={i} className="notice warn" data-testid="doctor-notice">
              {t(n.key, n.params)}
            </p>
          ))}
          {r.matches.length === 0 ? (
            // unknown error lines are not a clean bill of health
            <p className={`notice ${r.unmatched.length ? 'warn' : 'ok'}`} data-testid="doctor-none">
              {r.unmatched.length
                ? t('doctor.noMatchesButUnknown', { count: r.unmatched.length })
                : t('doctor.noMatches')}
            </p>
          ) : (
            <ol className="cards" style={{ listStyle: 'none', padding: 0 }}>
              {r.matches.map((m, i) => (
                <MatchCard key={`${m.file ?? ''}:${m.line}:${m.rule}`} m={m} n={i + 1} />
              ))}
            </ol>
          )}
          <h2>{t('doctor.unknownTitle')}</h2>
          {r.unmatched.length === 0 ? (
            <p className="muted">{t('doctor.unknownNone')}</p>
          ) : (
            <ul data-testid="doctor-unmatched">
              {r.unmatched.map((u) => (
                <li key={`${u.file ?? ''}:${u.line}`}>
                  <span className="muted small">
                    {u.file ? `${u.file} · ` : ''}
                    {t('doctor.line', { line: u.line })}
                  </span>{' '}
                  <code>{u.text}</code>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
