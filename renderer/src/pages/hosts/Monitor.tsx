import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { MonitorSample } from '../../../../shared/api';
import { useEvent, useTransport } from '../../api';
import { ErrorText, useExplainError } from '../../components/ErrorText';

const KEEP = 90;

type Metric = {
  key: string;
  label: string;
  unit: string;
  max: (s: MonitorSample['chips'][number]) => number | null;
  value: (s: MonitorSample['chips'][number]) => number | null;
};

const METRICS: Metric[] = [
  { key: 'aicore', label: 'AICore', unit: '%', max: () => 100, value: (c) => c.aicorePct },
  {
    key: 'hbm',
    label: 'HBM',
    unit: 'MB',
    max: (c) => c.hbmTotalMB ?? c.memTotalMB,
    value: (c) => c.hbmUsedMB ?? c.memUsedMB,
  },
  { key: 'temp', label: '°C', unit: '°C', max: () => 110, value: (c) => c.tempC },
  { key: 'power', label: 'W', unit: 'W', max: () => 400, value: (c) => c.powerW },
];

/** A tiny SVG line chart: no chart library, nothing fetched, fine under the CSP. */
function Spark(props: { values: (number | null)[]; max: number; label: string; last: string }) {
  const w = 150;
  const h = 34;
  const pts = props.values
    .map((v, i) =>
      v === null
        ? null
        : `${((i / Math.max(1, KEEP - 1)) * w).toFixed(1)},${(h - (Math.min(v, props.max) / props.max) * (h - 2) - 1).toFixed(1)}`,
    )
    .filter(Boolean)
    .join(' ');
  return (
    <figure className="spark" aria-label={`${props.label} ${props.last}`}>
      <svg width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img">
        <rect x="0" y="0" width={w} height={h} className="spark-bg" />
        {pts && <polyline points={pts} className="spark-line" fill="none" />}
      </svg>
      <figcaption>
        <span className="muted">{props.label}</span> <strong>{props.last}</strong>
      </figcaption>
    </figure>
  );
}

/**
 * Live npu-smi readings over one kept-open channel. Stops while the page is hidden (no point
 * polling a host nobody is looking at) and resumes when it is shown again.
 */
export function Monitor(props: { name: string; password?: string }) {
  const { t } = useTranslation();
  const explain = useExplainError();
  const transport = useTransport();
  const [interval, setIntervalSec] = useState(2);
  const [wanted, setWanted] = useState(false);
  const [monitorId, setMonitorId] = useState<string | null>(null);
  const [samples, setSamples] = useState<MonitorSample[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [ended, setEnded] = useState<string | null>(null);
  const idRef = useRef<string | null>(null);
  const [hidden, setHidden] = useState(document.visibilityState === 'hidden');

  useEffect(() => {
    const onVis = () => setHidden(document.visibilityState === 'hidden');
    document.addEventListener('visibilitychange', onVis);
    return () => document.removeEventListener('visibilitychange', onVis);
  }, []);

  useEffect(() => {
    if (!wanted || hidden) return;
    let cancelled = false;
    setError(null);
    setEnded(null);
    transport
      .call('monitor.start', {
        name: props.name,
        intervalSec: interval,
        ...(props.password ? { password: props.password } : {}),
      })
      .then(({ monitorId: id }) => {
        if (cancelled)
          return void transport.call('monitor.stop', { monitorId: id }).catch(() => undefined);
        idRef.current = id;
        setMonitorId(id);
      })
      .catch((e: unknown) => {
        setError(e);
        setWanted(false);
      });
    return () => {
      cancelled = true;
      const id = idRef.current;
      idRef.current = null;
      setMonitorId(null);
      if (id) void transport.call('monitor.stop', { monitorId: id }).catch(() => undefined);
    };
  }, [wanted, hidden, interval, props.name, props.password, transport]);

  const onSample = useCallback((s: MonitorSample) => {
    if (s.monitorId === idRef.current) setSamples((prev) => [...prev.slice(-(KEEP - 1)), s]);
  }, []);
  useEvent('monitor.sample', onSample);
  const onEnded = useCallback(
    (e: {
      monitorId: string;
      error: { code: string; message: string; detail?: unknown } | null;
    }) => {
      if (e.monitorId !== idRef.current) return;
      idRef.current = null;
      setMonitorId(null);
      setWanted(false);
      if (e.error) setEnded(explain(e.error));
    },
    [explain],
  );
  useEvent('monitor.ended', onEnded);

  const latest = samples.at(-1);
  return (
    <div data-testid="monitor">
      <div className="row">
        <button
          className={wanted ? '' : 'primary'}
          data-testid="monitor-toggle"
          onClick={() => setWanted((w) => !w)}
        >
          {wanted ? t('hosts.monitor.stop') : t('hosts.monitor.start')}
        </button>
        <label className="field">
          <span>{t('hosts.monitor.interval')}</span>
          <select value={interval} onChange={(e) => setIntervalSec(Number(e.target.value))}>
            {[1, 2, 5, 10, 30].map((n) => (
              <option key={n} value={n}>{`${n} s`}</option>
            ))}
          </select>
        </label>
        <span className="muted small" data-testid="monitor-state">
          {monitorId
            ? t('hosts.monitor.live', { count: samples.length })
            : wanted && hidden
              ? t('hosts.monitor.paused')
              : ''}
        </span>
      </div>
      {error !== null && <ErrorText error={error} />}
      {ended && <p className="error">{ended}</p>}
      {latest && (
        <div className="spark-grid" data-testid="monitor-chips">
          {latest.chips.map((c, idx) => (
            <div className="spark-row" key={`${c.npu}-${c.chip}`} data-testid="monitor-chip">
              <strong>{`NPU ${c.npu}.${c.chip}`}</strong>
              {METRICS.map((m) => {
                const series = samples.map((s) => (s.chips[idx] ? m.value(s.chips[idx]!) : null));
                const v = m.value(c);
                return (
                  <Spark
                    key={m.key}
                    values={series}
                    max={m.max(c) ?? 100}
                    label={m.label}
                    last={v === null ? '—' : `${v} ${m.unit === '°C' ? '' : m.unit}`.trim()}
                  />
                );
              })}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
