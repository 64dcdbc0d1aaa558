import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { StageRunRecord } from '../../../../shared/api';
import type { ProfileCompare, ProfileCompareRow } from '../../../../shared/stages/profiling/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { uiHost, uiNumber } from '../../format';

const NS = 'stage-profiling:';
const us = (x: number | null) => (x === null ? '—' : uiNumber(Math.round(x)));
const times = (x: number | null) => (x === null ? '—' : `×${x.toFixed(2)}`);
const delta = (r: { aUs: number | null; bUs: number | null }) =>
  r.aUs === null || r.bUs === null ? null : r.bUs - r.aUs;
const signed = (x: number | null) => (x === null ? '—' : `${x > 0 ? '+' : ''}${us(x)}`);
/** A regression (b slower) reads as a failure, an improvement as a pass. */
const tone = (x: number | null) => (x === null || x === 0 ? 'muted' : x > 0 ? 'error' : 'ok-text');

const CATEGORY: Record<ProfileCompare['categories'][number]['name'], string> = {
  computing: 'report.computing',
  communicationNotOverlapped: 'report.communication',
  free: 'report.free',
  bubble: 'report.bubble',
};

/**
 * Two stored profiles of the session side by side: a before/after pair, or the NPU run (b)
 * against a GPU baseline profiled by the same stage (a). Step time, each category, kernel time by
 * task type, and per op where the names map, sorted by the difference and searchable.
 */
export function ComparisonView(props: { sessionId: number; runs: StageRunRecord[] }) {
  const { t } = useTranslation();
  // the session's profiles first, then the others (a GPU baseline may live in its own session)
  const list = useCall('profiling.list', { sessionId: props.sessionId, limit: 200 });
  const runs = list.data ?? [];
  // newest first: b is the newest, a the one before it, until the user picks
  const [pickedA, setA] = useState<number | null>(null);
  const [pickedB, setB] = useState<number | null>(null);
  const a = pickedA ?? runs[1]?.stageRunId ?? null;
  const b = pickedB ?? runs[0]?.stageRunId ?? null;
  const ready = a !== null && b !== null && a !== b;
  const cmp = useCall('profiling.compare', { a: a ?? 1, b: b ?? 1 }, { enabled: ready });
  if (list.error) return <ErrorText error={list.error} />;
  if (!list.data) return null;
  // the session's runs that stored no profile are never offered: say why they are missing
  const stored = new Set(runs.map((r) => r.stageRunId));
  const without = props.runs.filter((r) => !stored.has(r.id)).map((r) => r.id);
  const missing = without.length > 0 && (
    <p className="muted small" data-testid="profiling-compare-not-comparable">
      {t(`${NS}ui.compare.notComparable`, {
        count: without.length,
        ids: without.map((id) => `#${id}`).join(t('common.join.list')),
      })}
    </p>
  );
  if (runs.length < 2)
    return (
      <>
        <p className="muted" data-testid="profiling-compare-needs-two">
          {t(`${NS}ui.compare.needTwo`)}
        </p>
        {missing}
      </>
    );
  const pick = (value: number | null, set: (n: number) => void, label: string, id: string) => (
    <label style={{ marginRight: 16 }}>
      <span>{t(`${NS}ui.compare.${label}`)}</span>{' '}
      <select
        value={value ?? ''}
        onChange={(e) => set(Number(e.target.value))}
        data-testid={`profiling-compare-${id}`}
      >
        {runs.map((r) => (
          <option key={r.stageRunId} value={r.stageRunId}>
            #{r.stageRunId} {uiHost(r.host)} · {r.source.split(/[\\/]/).pop()} ({r.kind}
            {r.sessionId === props.sessionId ? '' : `, S${r.sessionId}`}) {r.createdAt}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section data-testid="profiling-compare">
      <div>
        {pick(a, setA, 'a', 'a')}
        {pick(b, setB, 'b', 'b')}
      </div>
      {missing}
      {!ready && <p className="notice warn">{t(`${NS}ui.compare.same`)}</p>}
      {ready && cmp.error && <ErrorText error={cmp.error} />}
      {ready && cmp.data && <Comparison c={cmp.data} />}
    </section>
  );
}

function Comparison({ c }: { c: ProfileCompare }) {
  const { t } = useTranslation();
  const k = (key: string, p?: Record<string, unknown>) => t(`${NS}ui.compare.${key}`, p);
  return (
    <>
      <table className="table" data-testid="profiling-compare-step">
        <thead>
          <tr>
            <th>{k('category')}</th>
            <th>a</th>
            <th>b</th>
            <th>{k('delta')}</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              <strong>{k('step')}</strong>
            </td>
            <td title={c.a.source}>{us(c.a.stepUs)}</td>
            <td title={c.b.source}>{us(c.b.stepUs)}</td>
            <td className={tone(delta({ aUs: c.a.stepUs, bUs: c.b.stepUs }))}>
              {signed(delta({ aUs: c.a.stepUs, bUs: c.b.stepUs }))}
            </td>
          </tr>
          {c.categories.map((x) => (
            <tr key={x.name} data-testid={`profiling-compare-cat-${x.name}`}>
              <td>{t(`${NS}${CATEGORY[x.name]}`)}</td>
              <td>{us(x.aUs)}</td>
              <td>{us(x.bUs)}</td>
              <td className={tone(x.diffUs)}>{signed(x.diffUs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {c.stepRatio !== null && (
        <p data-testid="profiling-compare-ratio">{k('ratio', { ratio: c.stepRatio.toFixed(3) })}</p>
      )}
      {c.byTaskType.length > 0 && (
        <>
          <h3>{k('taskTypes')}</h3>
          <Rows rows={c.byTaskType} testId="profiling-compare-task-types" />
        </>
      )}
      <Ops rows={c.byOpType} />
      <AdviceDiff advice={c.advice} />
    </>
  );
}

function Ops({ rows }: { rows: ProfileCompareRow[] }) {
  const { t } = useTranslation();
  const [q, setQ] = useState('');
  const { mapped, onlyOne } = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const hit = rows.filter((r) => !needle || r.name.toLowerCase().includes(needle));
    return {
      // where the names map on both sides, the largest change (either way) first
      mapped: hit
        .filter((r) => r.aUs !== null && r.bUs !== null)
        .sort((x, y) => Math.abs(delta(y) ?? 0) - Math.abs(delta(x) ?? 0)),
      onlyOne: hit.filter((r) => r.aUs === null || r.bUs === null),
    };
  }, [rows, q]);
  return (
    <section>
      <h3>{t(`${NS}ui.compare.ops`)}</h3>
      <input
        type="search"
        placeholder={t(`${NS}ui.compare.search`)}
        value={q}
        onChange={(e) => setQ(e.target.value)}
        data-testid="profiling-compare-search"
      />
      <Rows rows={mapped} testId="profiling-compare-ops" />
      {onlyOne.length > 0 && (
        <details>
          <summary className="small">
            {t(`${NS}ui.compare.onlyOne`, { count: onlyOne.length })}
          </summary>
          <Rows rows={onlyOne} testId="profiling-compare-only-one" />
        </details>
      )}
    </section>
  );
}

function Rows({ rows, testId }: { rows: ProfileCompareRow[]; testId: string }) {
  const { t } = useTranslation();
  return (
    <table className="table" data-testid={testId}>
      <thead>
        <tr>
          <th>{t(`${NS}ui.compare.name`)}</th>
          <th>a (µs)</th>
          <th>b (µs)</th>
          <th>{t(`${NS}ui.compare.delta`)}</th>
          <th>{t(`${NS}ui.compare.ratioCol`)}</th>
        </tr>
      </thead>
      <tbody>
        {rows.slice(0, 500).map((r) => (
          <tr key={r.name} data-name={r.name}>
            <td>
              <code>{r.name}</code>
            </td>
            <td>{us(r.aUs)}</td>
            <td>{us(r.bUs)}</td>
            <td className={tone(delta(r))}>{signed(delta(r))}</td>
            <td>{times(r.ratio)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function AdviceDiff({ advice }: { advice: ProfileCompare['advice'] }) {
  const { t } = useTranslation();
  const list = (ids: string[]) =>
    ids.length ? ids.map((id) => <code key={id}>{id} </code>) : t(`${NS}ui.compare.none`);
  return (
    <ul className="small" data-testid="profiling-compare-advice">
      <li>
        {t(`${NS}ui.compare.fixed`)}: {list(advice.fixed)}
      </li>
      <li>
        {t(`${NS}ui.compare.added`)}: {list(advice.added)}
      </li>
      <li>
        {t(`${NS}ui.compare.kept`)}: {list(advice.kept)}
      </li>
    </ul>
  );
}
