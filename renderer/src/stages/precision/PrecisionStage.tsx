import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionRecord } from '../../../../shared/api';
import type { ModuleCompare, TensorStats } from '../../../../shared/stages/precision/api';
import { useAction, useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { useJob } from '../../components/JobsDrawer';
import { useText } from '../../i18n';
import { CheckCard } from '../shared/CheckCard';
import { DumpDrill } from './DumpDrill';
import { PrecisionChart } from './PrecisionChart';
import type { StageViewProps } from '../shared/types';
import { uiHost, uiJobStep } from '../../format';

const NS = 'stage-precision:';
const RESULT_COLOUR: Record<string, string> = {
  pass: 'var(--ok)',
  warning: 'var(--warn)',
  error: 'var(--fail)',
  none: 'var(--muted, #888)',
};

/** Heat colour of an error on a log scale: 1e-8 and below transparent, 1e-1 and above full red. */
export function heat(err: number | null): string | undefined {
  if (err === null || err <= 0) return undefined;
  const x = Math.min(1, Math.max(0, (Math.log10(err) + 8) / 7));
  return x === 0 ? undefined : `hsla(${(1 - x) * 45}, 90%, 50%, ${0.15 + 0.55 * x})`;
}

const fmt = (x: number | null | undefined, digits = 3) =>
  x === null || x === undefined
    ? '—'
    : x === 0
      ? '0'
      : Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5
        ? x.toExponential(digits - 1)
        : x.toPrecision(digits + 1);

/** A comma-separated field as a list; none when empty. */
function list(x: string): string[] | undefined {
  const xs = x
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return xs.length ? xs : undefined;
}

/** Two runs side by side: how the first divergence moved, which modules changed their result. */
function RunsCompareView(props: { a: number; b: number }) {
  const { t } = useTranslation();
  const text = useText();
  const r = useCall('precision.compareRuns', { a: props.a, b: props.b });
  if (r.error) return <ErrorText error={r.error} />;
  if (!r.data) return <p className="muted">{t('common.loading')}</p>;
  const d = r.data;
  const good = d.moved === 'later' || d.moved === 'gone' || d.moved === 'none';
  return (
    <div data-testid="precision-compare">
      <div className={`callout ${good ? 'ok' : 'warn'}`} data-testid="precision-compare-summary">
        {text(d.summary)}
        <div className="small">
          {text({
            key: `${NS}runs.changes`,
            params: { ...d.counts, a: d.a.stageRunId, b: d.b.stageRunId },
          })}
        </div>
      </div>
      {!!d.changed.length && (
        <table className="table" data-testid="precision-compare-changed">
          <caption>{t(`${NS}ui.changed`)}</caption>
          <thead>
            <tr>
              <th>{t(`${NS}report.module`)}</th>
              <th>#{d.a.stageRunId}</th>
              <th>#{d.b.stageRunId}</th>
              <th>{t(`${NS}ui.change`)}</th>
            </tr>
          </thead>
          <tbody>
            {d.changed.slice(0, 200).map((c) => (
              <tr key={`${c.order}-${c.module}`}>
                <td>
                  <code>{c.module}</code>
                </td>
                <td style={{ color: RESULT_COLOUR[c.a] }}>{t(`${NS}result.${c.a}`)}</td>
                <td style={{ color: RESULT_COLOUR[c.b] }}>{t(`${NS}result.${c.b}`)}</td>
                <td>{t(`${NS}ui.${c.change}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/**
 * The session's precision stage: a run form (target, baseline, entry, dtype, mode), msprobe
 * import, the history of runs, and the chosen run's modules in execution order with a heat
 * colouring of their error, the first divergence and the checks.
 */
export function PrecisionStage(props: StageViewProps) {
  const { session } = props;
  const { t } = useTranslation();
  const history = useCall('precision.history', { sessionId: session.id });
  const [chosen, setChosen] = useState<number | null>(null);
  /** Up to two runs ticked for "runs compared over time" (older first when shown). */
  const [ticked, setTicked] = useState<number[]>([]);
  const tick = (id: number, on: boolean) =>
    setTicked((xs) =>
      on ? [...xs.filter((x) => x !== id), id].slice(-2) : xs.filter((x) => x !== id),
    );
  const runId = chosen ?? history.data?.[0]?.stageRunId ?? null;
  const run = session.runs.find((r) => r.id === runId) ?? null;
  return (
    <div className="precision-stage" data-testid="precision-stage">
      <RunForm session={session} onStarted={(id) => setChosen(id)} />
      <ImportForm sessionId={session.id} onImported={(id) => setChosen(id)} />
      <h2>{t(`${NS}ui.history`)}</h2>
      {history.error && <ErrorText error={history.error} />}
      {history.data && !history.data.length && <p className="muted">{t(`${NS}ui.noRuns`)}</p>}
      {!!history.data?.length && (
        <table className="table" data-testid="precision-history">
          <thead>
            <tr>
              <th title={t(`${NS}ui.compareHint`)}>{t(`${NS}ui.compareWith`)}</th>
              <th>#</th>
              <th>{t(`${NS}ui.target`)}</th>
              <th>{t(`${NS}ui.baseline`)}</th>
              <th>{t(`${NS}ui.entry`)}</th>
              <th>{t(`${NS}ui.dtype`)}</th>
              <th>{t(`${NS}ui.firstDivergence`)}</th>
              <th>{t(`${NS}ui.counts`)}</th>
            </tr>
          </thead>
          <tbody>
            {history.data.map((h) => (
              <tr
                key={h.stageRunId}
                className={`clickable${h.stageRunId === runId ? ' selected' : ''}`}
                onClick={() => setChosen(h.stageRunId)}
                data-testid={`precision-run-${h.stageRunId}`}
              >
                <td onClick={(e) => e.stopPropagation()}>
                  <input
                    type="checkbox"
                    aria-label={`${t(`${NS}ui.compareWith`)} ${h.stageRunId}`}
                    checked={ticked.includes(h.stageRunId)}
                    onChange={(e) => tick(h.stageRunId, e.target.checked)}
                    data-testid={`precision-tick-${h.stageRunId}`}
                  />
                </td>
                <td>{h.stageRunId}</td>
                <td>{uiHost(h.host)}</td>
                <td>{h.baseline}</td>
                <td>
                  <code>{h.entry}</code>
                </td>
                <td>
                  {h.dtype} · {t(`${NS}modeName.${h.mode}`)}
                </td>
                <td>
                  <code>{h.firstDivergence ?? '—'}</code>
                </td>
                <td>
                  {h.counts.pass} / {h.counts.warning} / {h.counts.error}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {!!history.data && history.data.length > 1 && ticked.length < 2 && (
        <p className="muted small">{t(`${NS}ui.compareHint`)}</p>
      )}
      {ticked.length === 2 && <RunsCompareView a={Math.min(...ticked)} b={Math.max(...ticked)} />}
      {runId !== null && <RunView key={runId} runId={runId} sessionId={session.id} />}
      <div className="code-checks">
        {run?.checks.map((c) => (
          <CheckCard key={c.id} check={c} sessionId={session.id} host={run.host} busy={false} />
        ))}
      </div>
    </div>
  );
}

function RunForm(props: { session: SessionRecord; onStarted: (stageRunId: number) => void }) {
  const { t } = useTranslation();
  const hosts = useCall('hosts.list', {});
  const names = hosts.data?.map((h) => h.name) ?? [];
  const key = `amw.precision.${props.session.id}`;
  const saved = JSON.parse(localStorage.getItem(key) ?? '{}') as Record<string, string>;
  const [target, setTarget] = useState(saved.target ?? props.session.hosts[0] ?? '');
  const [baseline, setBaseline] = useState(saved.baseline ?? '');
  const [entry, setEntry] = useState(saved.entry ?? '');
  const [script, setScript] = useState(saved.script ?? '');
  const [steps, setSteps] = useState(saved.steps ?? '');
  const [ops, setOps] = useState(saved.ops ?? '');
  const [modules, setModules] = useState(saved.modules ?? '');
  const [dtype, setDtype] = useState<'fp32' | 'bf16' | 'fp16'>('fp32');
  const [mode, setMode] = useState<'statistics' | 'tensor'>('statistics');
  const [backward, setBackward] = useState(false);
  const start = useAction('stages.run', ['jobs.list', 'sessions.get', 'precision.history']);
  const job = useJob(start.data?.jobId ?? null);
  const running = start.isPending || job?.status === 'running';
  return (
    <form
      className="scan-form"
      data-testid="precision-form"
      onSubmit={(e) => {
        e.preventDefault();
        localStorage.setItem(
          key,
          JSON.stringify({
            target,
            baseline,
            entry: entry.trim(),
            script: script.trim(),
            steps,
            ops,
            modules,
          }),
        );
        const useScript = !entry.trim() && !!script.trim();
        start.mutate(
          {
            stage: 'precision',
            host: target,
            baseline,
            sessionId: props.session.id,
            ...(useScript
              ? { script: script.trim(), steps: steps ? Number(steps) : undefined }
              : { entry: entry.trim() }),
            dtype,
            mode,
            backward,
            ops: list(ops),
            modules: mode === 'tensor' ? list(modules) : undefined,
          },
          { onSuccess: (r) => props.onStarted(r.stageRunId) },
        );
      }}
    >
      <label>
        <span>{t(`${NS}ui.target`)}</span>
        <select
          value={target}
          required
          onChange={(e) => setTarget(e.target.value)}
          data-testid="precision-target"
        >
          <option value="" />
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t(`${NS}ui.baseline`)}</span>
        <select
          value={baseline}
          required
          onChange={(e) => setBaseline(e.target.value)}
          data-testid="precision-baseline"
        >
          <option value="" />
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <label className="grow">
        <span>{t(`${NS}ui.entry`)}</span>
        <input
          data-testid="precision-entry"
          value={entry}
          required={!script.trim()}
          pattern="[^:]+:[A-Za-z_][A-Za-z0-9_]*"
          title={t('common.entryFormat')}
          placeholder="train/model.py:build_model_and_batches"
          onChange={(e) => setEntry(e.target.value)}
        />
      </label>
      <label className="grow">
        <span>{t(`${NS}ui.script`)}</span>
        <input
          data-testid="precision-script"
          value={script}
          disabled={!!entry.trim()}
          placeholder="train.py"
          onChange={(e) => setScript(e.target.value)}
        />
      </label>
      {!!script.trim() && !entry.trim() && (
        <label>
          <span>{t(`${NS}ui.steps`)}</span>
          <input
            data-testid="precision-steps"
            type="number"
            min={1}
            max={100}
            value={steps}
            placeholder="1"
            onChange={(e) => setSteps(e.target.value)}
          />
        </label>
      )}
      <label>
        <span>{t(`${NS}ui.ops`)}</span>
        <input
          data-testid="precision-ops"
          value={ops}
          pattern="\s*(aten::)?[A-Za-z_][A-Za-z0-9_.]*(\s*,\s*(aten::)?[A-Za-z_][A-Za-z0-9_.]*)*\s*"
          placeholder="gelu, aten::softmax"
          onChange={(e) => setOps(e.target.value)}
        />
      </label>
      <label>
        <span>{t(`${NS}ui.dtype`)}</span>
        <select
          value={dtype}
          onChange={(e) => setDtype(e.target.value as typeof dtype)}
          data-testid="precision-dtype"
        >
          <option value="fp32">fp32</option>
          <option value="bf16">bf16</option>
          <option value="fp16">fp16</option>
        </select>
      </label>
      <label>
        <span>{t(`${NS}ui.mode`)}</span>
        <select
          value={mode}
          onChange={(e) => setMode(e.target.value as typeof mode)}
          data-testid="precision-mode"
        >
          <option value="statistics">{t(`${NS}modeName.statistics`)}</option>
          <option value="tensor">{t(`${NS}modeName.tensor`)}</option>
        </select>
      </label>
      {mode === 'tensor' && (
        <label>
          <span>{t(`${NS}ui.modules`)}</span>
          <input
            data-testid="precision-modules-filter"
            value={modules}
            placeholder="block.*, head"
            onChange={(e) => setModules(e.target.value)}
          />
        </label>
      )}
      <label className="check">
        <input type="checkbox" checked={backward} onChange={(e) => setBackward(e.target.checked)} />
        <span>{t(`${NS}ui.backward`)}</span>
      </label>
      <button className="primary" type="submit" disabled={running} data-testid="precision-run">
        {t(`${NS}ui.run`)}
      </button>
      {start.error && <ErrorText error={start.error} />}
      {job?.status === 'failed' && job.error && <ErrorText error={job.error} />}
      {running && (
        <p className="muted small">{job?.message ? uiJobStep(job.message) : t('common.loading')}</p>
      )}
    </form>
  );
}

function ImportForm(props: { sessionId: number; onImported: (stageRunId: number) => void }) {
  const { t } = useTranslation();
  const [path, setPath] = useState('');
  const imp = useAction('precision.import', ['sessions.get', 'precision.history']);
  return (
    <form
      className="scan-form"
      data-testid="precision-import"
      onSubmit={(e) => {
        e.preventDefault();
        imp.mutate(
          { path: path.trim(), sessionId: props.sessionId },
          { onSuccess: (r) => props.onImported(r.stageRunId) },
        );
      }}
    >
      <label className="grow">
        <span>{t(`${NS}ui.importPath`)}</span>
        <input
          value={path}
          required
          onChange={(e) => setPath(e.target.value)}
          placeholder="/data/msprobe/dump_path"
        />
      </label>
      <button type="submit" disabled={imp.isPending}>
        {t(`${NS}ui.importButton`)}
      </button>
      {/* the imported run opens below with its problems listed there: not here a second time */}
      {imp.error && <ErrorText error={imp.error} />}
    </form>
  );
}

function RunView(props: { runId: number; sessionId: number }) {
  const { t } = useTranslation();
  const text = useText();
  const view = useCall('precision.get', { stageRunId: props.runId });
  const [onlyDiverging, setOnlyDiverging] = useState(false);
  const [open, setOpen] = useState<number | null>(null);
  const rows = useMemo(
    () =>
      (view.data?.modules ?? []).filter(
        (m) => !onlyDiverging || m.result === 'warning' || m.result === 'error',
      ),
    [view.data, onlyDiverging],
  );
  if (view.error) return <ErrorText error={view.error} />;
  const v = view.data;
  if (!v) return <p className="muted">{t('common.loading')}</p>;
  const f = v.firstDivergence;
  return (
    <div data-testid="precision-result">
      {f ? (
        <div
          className={`callout ${f.result === 'error' ? 'fail' : 'warn'}`}
          data-testid="precision-first"
        >
          <strong>{t(`${NS}ui.firstDivergence`)}:</strong> <code>{f.module}</code> (
          {t(`${NS}result.${f.result}`)}){' '}
          {f.review ? (
            <a href={`#/code/${f.review.scanId}/${f.review.file}@${f.review.line}`}>
              <code>{f.source}</code>
            </a>
          ) : (
            <code>{f.source ?? ''}</code>
          )}
          {(() => {
            const r = v.modules[f.order]?.reason;
            return r ? (
              <div className="small">{text({ key: `${NS}${r.key}`, params: r.params })}</div>
            ) : null;
          })()}
        </div>
      ) : v.modules.length ? (
        <div className="callout ok">{t(`${NS}report.none`)}</div>
      ) : (
        <div className="callout warn">{t(`${NS}report.noneCompared`)}</div>
      )}
      {v.problems.map((p, i) => (
        <p key={i} className="notice warn small">
          {text(p)}
        </p>
      ))}
      <PrecisionChart modules={v.modules} />
      <label className="check">
        <input
          type="checkbox"
          checked={onlyDiverging}
          onChange={(e) => setOnlyDiverging(e.target.checked)}
        />
        <span>{t(`${NS}ui.onlyDiverging`)}</span>
      </label>
      <table className="table" data-testid="precision-modules">
        <thead>
          <tr>
            <th>{t(`${NS}ui.order`)}</th>
            <th>{t(`${NS}report.module`)}</th>
            <th>{t(`${NS}report.result`)}</th>
            <th>{t(`${NS}ui.cosine`)}</th>
            <th>{t(`${NS}ui.maxAbsErr`)}</th>
            <th>{t(`${NS}ui.maxRelErr`)}</th>
            <th>{t(`${NS}ui.drift`)}</th>
            <th>{t(`${NS}report.source`)}</th>
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, 2000).map((m) => (
            <ModuleRow
              key={m.order}
              runId={props.runId}
              m={m}
              open={open === m.order}
              onToggle={() => setOpen(open === m.order ? null : m.order)}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ModuleRow(props: {
  runId: number;
  m: ModuleCompare;
  open: boolean;
  onToggle: () => void;
}) {
  const { t } = useTranslation();
  const text = useText();
  const { m } = props;
  const stats = (s: TensorStats | null) =>
    s
      ? `${s.dtype} [${s.shape.join('×')}] ${fmt(s.max)} / ${fmt(s.min)} / ${fmt(s.mean)} / ${fmt(s.norm)}${s.nan || s.inf ? ` · NaN ${s.nan} Inf ${s.inf}` : ''}`
      : '—';
  return (
    <>
      <tr
        className="clickable"
        onClick={props.onToggle}
        data-testid={`precision-module-${m.order}`}
      >
        <td>{m.order}</td>
        <td>
          <code>{m.module}</code> <span className="muted small">{m.cls}</span>
        </td>
        <td style={{ color: RESULT_COLOUR[m.result] }} data-result={m.result}>
          {t(`${NS}result.${m.result}`)}
        </td>
        <td>{fmt(m.cosine, 6)}</td>
        <td style={{ background: heat(m.maxAbsErr) }}>{fmt(m.maxAbsErr)}</td>
        <td>{fmt(m.maxRelErr)}</td>
        <td style={{ background: heat(m.statDrift) }}>{fmt(m.statDrift)}</td>
        <td>
          <code className="small">{m.source ?? ''}</code>
        </td>
      </tr>
      {props.open && (
        <tr>
          <td />
          <td colSpan={7} className="small">
            {m.reason && (
              <div>{text({ key: `${NS}${m.reason.key}`, params: m.reason.params })}</div>
            )}
            <div>
              {t(`${NS}side.baseline`)}
              {t('common.paren', { text: t(`${NS}ui.stats`) })}
              {t('common.colon')}
              {stats(m.baseline)}
            </div>
            <div>
              {t(`${NS}side.target`)}
              {t('common.paren', { text: t(`${NS}ui.stats`) })}
              {t('common.colon')}
              {stats(m.target)}
            </div>
            {m.oneThousandthRatio !== null && (
              <div>
                {t(`${NS}ui.ratios`)}: {fmt(m.oneThousandthRatio)} / {fmt(m.fiveThousandthsRatio)} ·{' '}
                {t(`${NS}ui.meanRelErr`)} {fmt(m.meanRelErr)}
              </div>
            )}
            <DumpDrill runId={props.runId} module={m.module} />
          </td>
        </tr>
      )}
    </>
  );
}
