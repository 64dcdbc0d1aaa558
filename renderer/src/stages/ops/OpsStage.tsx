import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionRecord, StageRunRecord } from '../../../../shared/api';
import {
  OP_CLASSES,
  type OpClass,
  type OpRow,
  type OpsBreakdown,
} from '../../../../shared/stages/ops/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { href } from '../../routes';
import { CheckCard } from '../shared/CheckCard';
import { RunBlock, useJobAction } from '../shared/RunBlock';
import { StageStatusBadge } from '../shared/StageStatus';
import type { StageViewProps } from '../shared/types';
import { uiHost } from '../../format';

const CLASS_KEY: Record<OpClass, keyof OpsBreakdown> = {
  direct: 'direct',
  'needs-change': 'needsChange',
  'cpu-fallback': 'cpuFallback',
  unsupported: 'unsupported',
};

/** The session's ops stage: one panel per host, each with its entry, run, breakdown and table. */
export function OpsStage(props: StageViewProps) {
  const { t } = useTranslation();
  if (!props.hosts.length) return <p className="muted">{t('stage-ops:ui.noHosts')}</p>;
  return (
    <div className="ops-stage" data-testid="ops-stage">
      {props.hosts.map((host) => (
        <OpsHost
          key={host}
          session={props.session}
          host={host}
          run={props.runs.find((r) => r.host === host) ?? null}
        />
      ))}
    </div>
  );
}

function OpsHost(props: { session: SessionRecord; host: string; run: StageRunRecord | null }) {
  const { t } = useTranslation();
  const key = `amw.opsEntry.${props.session.id}.${props.host}`;
  const [entry, setEntry] = useState(() => localStorage.getItem(key) ?? '');
  const [backward, setBackward] = useState(false);
  const [target, setTarget] = useState('');
  const run = useJobAction('stages.run');
  const { running } = run;
  const r = props.run;
  return (
    <section className="ops-host" data-testid={`ops-host-${props.host}`}>
      <header className="stage-head">
        <h2>{uiHost(props.host)}</h2>
        <StageStatusBadge status={r?.status} />
      </header>
      <form
        className="scan-form"
        onSubmit={(e) => {
          e.preventDefault();
          localStorage.setItem(key, entry.trim());
          run.start({
            stage: 'ops',
            host: props.host,
            sessionId: props.session.id,
            entry: entry.trim(),
            backward,
            ...(target ? { torchNpu: target } : {}),
          });
        }}
      >
        <label className="grow">
          <span>{t('stage-ops:ui.entry')}</span>
          <input
            data-testid="ops-entry"
            value={entry}
            required
            pattern="[^:]+:[A-Za-z_][A-Za-z0-9_]*"
            title={t('common.entryFormat')}
            placeholder="train/model.py:build_model_and_batches"
            onChange={(e) => setEntry(e.target.value)}
          />
        </label>
        <label>
          <span>{t('stage-ops:ui.target')}</span>
          <select
            data-testid="ops-target"
            value={target}
            onChange={(e) => setTarget(e.target.value)}
          >
            <option value="">{t('stage-ops:ui.hostVersion')}</option>
            {useOpLists().map((v) => (
              <option key={v} value={v}>
                torch_npu {v}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={backward}
            onChange={(e) => setBackward(e.target.checked)}
            data-testid="ops-backward"
          />
          <span>{t('stage-ops:ui.backward')}</span>
        </label>
        <button className="primary" type="submit" disabled={running} data-testid="ops-run">
          {r ? t('sessions.rerunStage') : t('stage-ops:run')}
        </button>
      </form>
      <p className="muted small">{t('stage-ops:ui.entryHelp')}</p>
      <RunBlock run={run} />
      {r && !running && r.status !== 'error' && r.status !== 'running' && (
        <OpsResultView runId={r.id} sessionId={props.session.id} />
      )}
      <div className="code-checks">
        {r?.checks.map((c) => (
          <CheckCard
            key={c.id}
            check={c}
            sessionId={props.session.id}
            host={props.host}
            busy={running}
          />
        ))}
      </div>
    </section>
  );
}

function OpsResultView(props: { runId: number; sessionId: number }) {
  const { t } = useTranslation();
  const opLists = useOpLists();
  // the session's newest code scan: an op's source line opens there when it has that file
  const scan = useCall('code.scans', { sessionId: props.sessionId }).data?.[0] ?? null;
  const files = useCall('code.get', { scanId: scan?.id ?? 1 }, { enabled: !!scan });
  const codeLink = (at: string): string | null => {
    const m = /^(.*):(\d+)$/.exec(at);
    if (!m || !scan || !files.data) return null;
    const hit = files.data.fileList.find(
      (f) => f.hasText && (f.file === m[1] || f.file.endsWith(`/${m[1]}`)),
    );
    return hit ? href.scan(scan.id, hit.file, Number(m[2])) : null;
  };
  const [versus, setVersus] = useState('');
  const result = useCall('ops.get', { stageRunId: props.runId });
  const compare = useCall('ops.compare', {
    a: props.runId,
    b: props.runId,
    ...(versus ? { torchNpuB: versus } : {}),
  });
  if (result.error) return <ErrorText error={result.error} />;
  const r = result.data;
  if (!r) return <p className="muted">{t('common.loading')}</p>;
  if (r.error) return null; // the ops.trace check card shows the traceback
  return (
    <div className="ops-result" data-testid="ops-result">
      <p className="muted small">
        {t('stage-ops:ui.against', {
          version: r.targetTorchNpu,
          list: r.opList,
          torch: r.torch ?? '?',
        })}
        {r.opListNote ? ` ${r.opListNote}` : ''}
      </p>
      <Breakdown breakdown={r.breakdown} />
      <div className="compare-line">
        <label>
          <span>{t('stage-ops:ui.compareWith')}</span>{' '}
          <select
            value={versus}
            onChange={(e) => setVersus(e.target.value)}
            data-testid="ops-compare"
          >
            <option value="">—</option>
            {opLists.map((v) => (
              <option key={v} value={v}>
                torch_npu {v}
              </option>
            ))}
          </select>
        </label>
        {versus && compare.data && (
          <span data-testid="ops-compare-result">
            {t('stage-ops:ui.compareSummary', {
              version: versus,
              improved: compare.data.rows.filter((x) => x.change === 'improved').length,
              regressed: compare.data.rows.filter((x) => x.change === 'regressed').length,
              fallbacks: compare.data.b.cpuFallback,
            })}{' '}
            {compare.data.rows
              .filter((x) => x.change !== 'same')
              .slice(0, 8)
              .map((x) => `${x.op}.${x.overload}: ${x.a} → ${x.b}`)
              .join(' · ')}
          </span>
        )}
      </div>
      <OpTable ops={r.ops} codeLink={codeLink} />
      {r.variableInputs.length > 0 && (
        <p className="notice warn small" data-testid="variable-inputs">
          {t('stage-ops:ui.variableInputs', {
            list: r.variableInputs
              .map(
                (v) =>
                  `#${v.arg} [${v.dims.join(', ')}]: ${v.seen.map((s) => `(${s.join('×')})`).join(' ')}`,
              )
              .join('; '),
          })}
        </p>
      )}
    </div>
  );
}

/** Four classes as one stacked bar: proportions at a glance, counts in the legend. */
function Breakdown(props: { breakdown: OpsBreakdown }) {
  const { t } = useTranslation();
  const total = OP_CLASSES.reduce((n, c) => n + props.breakdown[CLASS_KEY[c]], 0) || 1;
  let x = 0;
  return (
    <figure className="breakdown" data-testid="ops-breakdown">
      <svg
        viewBox="0 0 100 6"
        preserveAspectRatio="none"
        role="img"
        aria-label={t('stage-ops:ui.breakdown')}
      >
        {OP_CLASSES.map((c) => {
          const w = (100 * props.breakdown[CLASS_KEY[c]]) / total;
          const rect = <rect key={c} x={x} y={0} width={w} height={6} className={`op-${c}`} />;
          x += w;
          return rect;
        })}
      </svg>
      <figcaption>
        {OP_CLASSES.map((c) => (
          <span key={c} className="legend">
            <i className={`swatch op-${c}`} /> {t(`stage-ops:ui.class.${c}`)}{' '}
            <strong data-testid={`ops-count-${c}`}>{props.breakdown[CLASS_KEY[c]]}</strong>
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

type SortKey = 'op' | 'count' | 'class' | 'shapes';

function OpTable(props: { ops: OpRow[]; codeLink: (at: string) => string | null }) {
  const { t } = useTranslation();
  const [cls, setCls] = useState<OpClass | ''>('');
  const [dynamicOnly, setDynamicOnly] = useState(false);
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'class', desc: true });
  const [open, setOpen] = useState<string | null>(null);
  const rank = (c: OpClass) => OP_CLASSES.indexOf(c);
  const rows = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = props.ops.filter(
      (o) =>
        (!cls || o.class === cls) &&
        (!dynamicOnly || o.dynamic) &&
        (!q || `${o.op}.${o.overload} ${o.modules.join(' ')}`.toLowerCase().includes(q)),
    );
    const value = (o: OpRow): number | string =>
      sort.key === 'op'
        ? o.op
        : sort.key === 'count'
          ? o.count
          : sort.key === 'shapes'
            ? o.distinctShapes
            : rank(o.class) * 1e9 + o.count;
    return [...list].sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      const d = typeof x === 'number' ? x - (y as number) : x.localeCompare(y as string);
      return sort.desc ? -d : d;
    });
  }, [props.ops, cls, dynamicOnly, query, sort]);
  const head = (key: SortKey, label: string) => (
    <th
      aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
      onClick={() => setSort({ key, desc: sort.key === key ? !sort.desc : key !== 'op' })}
      className="sortable"
      data-testid={`sort-${key}`}
    >
      {label}
    </th>
  );
  return (
    <>
      <div className="table-filters">
        <select
          value={cls}
          onChange={(e) => setCls(e.target.value as OpClass | '')}
          data-testid="ops-filter-class"
          aria-label={t('stage-ops:ui.classCol')}
        >
          <option value="">{t('stage-ops:ui.allClasses')}</option>
          {OP_CLASSES.map((c) => (
            <option key={c} value={c}>
              {t(`stage-ops:ui.class.${c}`)}
            </option>
          ))}
        </select>
        <label className="check">
          <input
            type="checkbox"
            checked={dynamicOnly}
            onChange={(e) => setDynamicOnly(e.target.checked)}
            data-testid="ops-filter-dynamic"
          />
          <span>{t('stage-ops:ui.dynamicOnly')}</span>
        </label>
        <input
          type="search"
          placeholder={t('stage-ops:ui.search')}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          data-testid="ops-search"
        />
        <span className="muted small">
          {t('stage-ops:ui.shown', { count: rows.length, total: props.ops.length })}
        </span>
      </div>
      <table className="table ops-table" data-testid="ops-table">
        <thead>
          <tr>
            {head('op', t('stage-ops:ui.op'))}
            {head('count', t('stage-ops:ui.count'))}
            {head('class', t('stage-ops:ui.classCol'))}
            {head('shapes', t('stage-ops:ui.shapes'))}
            <th>{t('stage-ops:ui.where')}</th>
            <th>{t('stage-ops:ui.replacement')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((o) => {
            const id = `${o.op}.${o.overload}`;
            return (
              <tr key={id} data-testid="op-row" data-op={id} data-class={o.class}>
                <td>
                  <code>{o.op.replace(/^aten::/, '')}</code>
                  {o.overload !== 'default' && <code className="muted">.{o.overload}</code>}
                </td>
                <td className="num">{o.count}</td>
                <td>
                  <span className={`op-class op-${o.class}`} title={o.reason}>
                    {t(`stage-ops:ui.class.${o.class}`)}
                  </span>
                  {o.dynamic && (
                    <span className="badge warn small" title={t('stage-ops:ui.dynamicHelp')}>
                      {t('stage-ops:ui.dynamic')}
                    </span>
                  )}
                </td>
                <td className="small">
                  {o.shapes
                    .slice(0, 2)
                    .map((s) => s.map((d) => `[${d.join(',')}]`).join(' '))
                    .join(' | ')}
                  {o.distinctShapes > 2 && ` (+${o.distinctShapes - 2})`}{' '}
                  <span className="muted">{o.dtypes.join(',')}</span>
                </td>
                <td className="small">
                  <span className="muted">{o.modules.slice(0, 2).join(', ')}</span>{' '}
                  {o.sources[0] && (
                    <button
                      className="link"
                      data-testid="op-source"
                      onClick={() => setOpen(open === id ? null : id)}
                    >
                      {o.sources[0].at}
                    </button>
                  )}
                  {open === id && props.codeLink(o.sources[0]!.at) && (
                    <a
                      className="small"
                      href={props.codeLink(o.sources[0]!.at)!}
                      data-testid="op-source-code"
                    >
                      {t('stage-ops:ui.openInCode')}
                    </a>
                  )}
                  {open === id && (
                    <pre className="source-lines" data-testid="op-source-text">
                      {o.sources.map((s) => `${s.at}\n    ${s.text}`).join('\n')}
                      {`\n\n${o.reason}`}
                    </pre>
                  )}
                </td>
                <td className="small">{o.replacement ?? ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

/** The op lists this build ships (app.info), not a list of the page's own. */
function useOpLists(): string[] {
  const info = useCall('app.info', {});
  const lists = info.data?.knowledge.stages.ops?.opLists;
  return Array.isArray(lists) ? (lists as string[]) : [];
}
