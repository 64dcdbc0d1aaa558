import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { StageViewProps } from '../shared/types';
import type { Advice, ProfileResult, StepBreakdown } from '../../../../shared/stages/profiling/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { toWireError } from '../../../../shared/errors';
import { CheckCard } from '../shared/CheckCard';
import { useText } from '../../i18n';
import { StepTimeline } from './StepTimeline';
import { ComparisonView } from './ComparisonView';
import { BreakdownChart } from './BreakdownChart';
import { ImportForm } from './ImportForm';
import { RunForm } from './RunForm';
import { uiHost, uiNumber } from '../../format';

const NS = 'stage-profiling:';
const us = (x: number) => uiNumber(Math.round(x));
const pc = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The colours of the breakdown's parts (the report uses the same order). */
const PARTS = [
  ['computingUs', 'report.computing', 'var(--ok, #1a7f37)'],
  ['communicationNotOverlappedUs', 'report.communication', 'var(--fail, #cf222e)'],
  ['freeUs', 'report.free', 'var(--warn, #9a6700)'],
] as const;

/** How a run ends without storing anything. */
const ENDED = new Set(['error', 'cancelled', 'interrupted']);

/**
 * The session's profiling stage: the newest stored profile (a run on a host or an import) — step
 * breakdown per rank as stacked bars, kernel time by task type, the top kernels with a search,
 * and the advice as cards; above them the run form (one or several hosts, ranks per host) and
 * the import form (a folder here, or the same folder on hosts).
 */
export function ProfilingView(props: StageViewProps) {
  const { t } = useTranslation();
  const runs = props.runs.filter((r) => r.status !== 'running');
  const [picked, setPicked] = useState<number | null>(null);
  const [comparing, setComparing] = useState(false);
  // a run just started is shown once it has ended (until then the newest finished one)
  const runId =
    (picked !== null && runs.some((r) => r.id === picked) ? picked : runs[0]?.id) ?? null;
  const run = runs.find((r) => r.id === runId) ?? null;
  // a run that ended in error (a failed import), was cancelled or cut off stored no profile
  const ended = !!run && ENDED.has(run.status);
  const result = useCall(
    'profiling.get',
    { stageRunId: runId ?? 1 },
    { enabled: runId !== null && !ended },
  );
  const noProfile = !!result.error && toWireError(result.error).code === 'NOT_FOUND';
  const failed = !!run?.checks.some((c) => c.status === 'fail');
  const forms = (
    <>
      <RunForm session={props.session} hosts={props.session.hosts} onStarted={setPicked} />
      <ImportForm sessionId={props.session.id} hosts={props.session.hosts} onImported={setPicked} />
    </>
  );
  if (!runs.length)
    return (
      <div className="profiling-stage" data-testid="profiling-stage">
        {forms}
        <p className="muted">{t(`${NS}ui.noRuns`)}</p>
      </div>
    );
  const toggle = (
    <button onClick={() => setComparing(!comparing)} data-testid="profiling-compare-toggle">
      {t(`${NS}ui.compare.${comparing ? 'close' : 'open'}`)}
    </button>
  );
  if (comparing)
    return (
      <div className="profiling-stage" data-testid="profiling-stage">
        {toggle}
        <ComparisonView sessionId={props.session.id} runs={runs} />
      </div>
    );
  return (
    <div className="profiling-stage" data-testid="profiling-stage">
      {forms}
      {toggle}
      {runs.length > 1 && (
        <label>
          <span>{t(`${NS}ui.run`)}</span>{' '}
          <select value={runId ?? ''} onChange={(e) => setPicked(Number(e.target.value))}>
            {runs.map((r) => (
              <option key={r.id} value={r.id}>
                #{r.id} {uiHost(r.host)} {r.startedAt}
              </option>
            ))}
          </select>
        </label>
      )}
      {/* a run whose entry failed stored no profile: its prof.run check below carries the error */}
      {ended && run && (
        <p className="notice warn" data-testid="profiling-no-profile">
          {t(`${NS}ui.noProfile`, { id: run.id, status: t(`sessions.status.${run.status}`) })}
        </p>
      )}
      {!ended && result.error && !(noProfile && failed) && <ErrorText error={result.error} />}
      {result.data && <Profile p={result.data} />}
      {result.data?.timeline && runId !== null && <StepTimeline stageRunId={runId} />}
      <div className="code-checks" data-testid="profiling-checks">
        {run?.checks.map((c) => (
          <CheckCard
            key={c.id}
            check={c}
            sessionId={props.session.id}
            host={run.host}
            busy={false}
          />
        ))}
      </div>
    </div>
  );
}

function Profile({ p }: { p: ProfileResult }) {
  const { t } = useTranslation();
  const show = useText();
  return (
    <>
      <h2 data-testid="profiling-result">
        {t(`${NS}report.run`, { source: p.source, kind: p.kind, ranks: p.ranks.length })}
      </h2>
      {p.steps.length > 0 && p.steps.length <= LABELLED_BARS && <Breakdown steps={p.steps} />}
      {p.steps.length > LABELLED_BARS && <BreakdownChart steps={p.steps} />}
      {p.kernels && (
        <section data-testid="profiling-task-types">
          <h3>{t(`${NS}report.taskTypes`)}</h3>
          {Object.entries(p.kernels.byTaskType).map(([tt, v]) => (
            <div key={tt} className="small" title={`${us(v.us)} µs`}>
              <code>{tt}</code> {pc(v.share)}
              <div style={{ background: '#d0d7de', height: 6, borderRadius: 3 }}>
                <div
                  style={{ width: pc(v.share), height: 6, borderRadius: 3, background: '#0969da' }}
                />
              </div>
            </div>
          ))}
        </section>
      )}
      {p.kernels && <TopKernels p={p} />}
      <section data-testid="profiling-advice">
        <h3>{t(`${NS}report.advice`)}</h3>
        {p.advice.length === 0 && <p className="muted">{t(`${NS}report.noAdvice`)}</p>}
        {p.advice.map((a) => (
          <AdviceCard key={a.id} a={a} />
        ))}
      </section>
      {p.warnings.length > 0 && (
        <section data-testid="profiling-warnings">
          <h3>{t(`${NS}report.warnings`)}</h3>
          <ul className="small">
            {p.warnings.slice(0, 100).map((w, i) => (
              <li key={i}>
                <code>
                  {w.file}
                  {w.line ? `:${w.line}` : ''}
                </code>{' '}
                {show(w.message)}
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

/**
 * Up to this many steps, one labelled bar per rank and step reads best; beyond it the uPlot chart
 * (a few draws for any number of steps — DOM bars took seconds at 128 ranks × 1000 steps).
 */
const LABELLED_BARS = 32;

function Breakdown({ steps }: { steps: StepBreakdown[] }) {
  const { t } = useTranslation();
  const max = Math.max(...steps.map((s) => s.totalUs), 1);
  return (
    <section data-testid="profiling-breakdown">
      <h3>{t(`${NS}report.breakdown`)}</h3>
      {steps.slice(0, 256).map((s, i) => (
        <div key={i} className="small" style={{ display: 'flex', alignItems: 'center', gap: 8 }}>
          <span style={{ width: 110 }}>
            {t(`${NS}report.rank`)} {s.rank ?? '?'} · {s.step ?? '?'}
          </span>
          <div style={{ display: 'flex', width: `${(100 * s.totalUs) / max}%`, height: 12 }}>
            {PARTS.map(([k, label, colour]) => (
              <div
                key={k}
                title={`${t(`${NS}${label}`)}: ${us(s[k])} µs`}
                style={{ width: `${(100 * s[k]) / (s.totalUs || 1)}%`, background: colour }}
              />
            ))}
          </div>
          <span>{us(s.totalUs)} µs</span>
        </div>
      ))}
      <div className="small">
        {PARTS.map(([k, label, colour]) => (
          <span key={k} style={{ marginRight: 12 }}>
            <i style={{ display: 'inline-block', width: 10, height: 10, background: colour }} />{' '}
            {t(`${NS}${label}`)}
          </span>
        ))}
      </div>
    </section>
  );
}

function TopKernels({ p }: { p: ProfileResult }) {
  const { t } = useTranslation();
  const [q, setQ] = useState('');
  // the op types (every one the file had) are searchable; the top kernels come first
  const rows = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const ops = Object.entries(p.kernels!.byOpType).map(([opType, v]) => ({
      name: opType,
      opType,
      taskType: v.taskType,
      us: v.us,
      count: v.count,
    }));
    const list = needle ? ops : p.kernels!.top;
    return list.filter((r) => !needle || `${r.name} ${r.taskType}`.toLowerCase().includes(needle));
  }, [p, q]);
  return (
    <section data-testid="profiling-top">
      <h3>{t(`${NS}report.top`)}</h3>
      <input
        type="search"
        placeholder={t(`${NS}ui.search`)}
        value={q}
        onChange={(e) => setQ(e.target.value)}
        data-testid="profiling-search"
      />
      <table className="table">
        <thead>
          <tr>
            <th>{t(`${NS}report.kernel`)}</th>
            <th>{t(`${NS}report.taskType`)}</th>
            <th>{t(`${NS}report.time`)}</th>
            <th>{t(`${NS}report.count`)}</th>
            <th>{t(`${NS}report.share`)}</th>
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, 500).map((r) => (
            <tr key={`${r.name}\u0000${r.taskType}`}>
              <td>
                <code>{r.name}</code>
              </td>
              <td>{r.taskType}</td>
              <td>{us(r.us)}</td>
              <td>{r.count}</td>
              <td>{pc(p.kernels!.totalUs ? r.us / p.kernels!.totalUs : 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function AdviceCard({ a }: { a: Advice }) {
  const { t } = useTranslation();
  const show = useText();
  return (
    <div
      className={`notice ${a.severity === 'high' ? 'fail' : a.severity === 'medium' ? 'warn' : ''}`}
      data-testid={`advice-${a.id}`}
    >
      <strong>{t(`${NS}report.severity.${a.severity}`)}</strong> <code>{a.id}</code>{' '}
      {a.share !== null ? `(${pc(a.share)})` : ''}
      <div>{show(a.message)}</div>
      <div className="small">→ {show(a.suggestion)}</div>
    </div>
  );
}
