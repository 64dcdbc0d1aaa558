import { useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { useText } from '../../i18n';
import {
  AXIS_H,
  GUTTER,
  LANE_H,
  decodeTimeline,
  draw,
  fmtUs,
  hit,
  pan,
  rows,
  zoom,
  type TimelineModel,
  type View,
} from './timeline-draw';
import { uiNumber } from '../../format';

const NS = 'stage-profiling:';
const HEIGHT = 420;

/**
 * A timeline of one step of the profile's trace_view.json (profiling.timeline): a track per
 * process/thread, wheel to zoom at the pointer, drag to pan (across and down the lanes),
 * double-click to see the whole step, a tooltip for the event under the pointer. The canvas is
 * redrawn once per animation frame at most, with what is in view only (timeline-draw.ts).
 */
export function StepTimeline({ stageRunId }: { stageRunId: number }) {
  const { t } = useTranslation();
  const show = useText();
  const [step, setStep] = useState<number | undefined>(undefined);
  const asked = useRef(performance.now());
  const q = useCall('profiling.timeline', { stageRunId, ...(step !== undefined ? { step } : {}) });
  const model = useMemo(() => (q.data ? decodeTimeline(q.data) : null), [q.data]);
  return (
    <section data-testid="profiling-timeline">
      <h3>{t(`${NS}ui.timeline.title`)}</h3>
      {q.error && <ErrorText error={q.error} />}
      {q.isLoading && <p className="muted">{t(`${NS}ui.timeline.loading`)}</p>}
      {q.data && (
        <div className="small" style={{ display: 'flex', gap: 12, alignItems: 'center' }}>
          {q.data.steps.length > 0 && (
            <label>
              {t(`${NS}ui.timeline.step`)}{' '}
              <select
                value={q.data.step ?? ''}
                onChange={(e) => {
                  asked.current = performance.now();
                  setStep(Number(e.target.value));
                }}
                data-testid="timeline-step"
              >
                {q.data.steps.map((s) => (
                  <option key={s} value={s}>
                    ProfilerStep#{s}
                  </option>
                ))}
              </select>
            </label>
          )}
          <span>
            {t(`${NS}ui.timeline.summary`, {
              events: uiNumber(q.data.events),
              tracks: q.data.tracks.length,
              span: fmtUs(q.data.endUs - q.data.startUs),
              file: q.data.file,
            })}
          </span>
          <span className="muted">{t(`${NS}ui.timeline.hint`)}</span>
        </div>
      )}
      {q.data?.truncated && (
        <p className="notice warn">{t(`${NS}ui.timeline.truncated`, { events: q.data.events })}</p>
      )}
      {q.data?.warnings.map((w, i) => (
        <p key={i} className="small">
          <code>
            {w.file}
            {w.line ? `:${w.line}` : ''}
          </code>{' '}
          {show(w.message)}
        </p>
      ))}
      {model && model.lanes.length > 0 && <TimelineCanvas model={model} asked={asked.current} />}
      {model && model.lanes.length === 0 && <p className="muted">{t(`${NS}ui.timeline.empty`)}</p>}
    </section>
  );
}

function TimelineCanvas({ model, asked }: { model: TimelineModel; asked: number }) {
  const { t } = useTranslation();
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(900);
  const view = useRef<View>({ t0: 0, t1: model.spanUs, row: 0 });
  const frame = useRef(0);
  const painted = useRef(false);
  const drag = useRef<{ x: number; y: number } | null>(null);
  const [tip, setTip] = useState<{ x: number; y: number; i: number } | null>(null);
  const laneCount = useMemo(() => rows(model).length, [model]);

  // a new step starts zoomed out
  useEffect(() => {
    view.current = { t0: 0, t1: model.spanUs, row: 0 };
    painted.current = false;
  }, [model]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(el.clientWidth, 300)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const redraw = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      const c = canvas.current;
      const ctx = c?.getContext('2d');
      if (!c || !ctx) return;
      const css = getComputedStyle(c);
      const colour = (name: string, fallback: string) =>
        css.getPropertyValue(name).trim() || fallback;
      const t0 = performance.now();
      const dpr = window.devicePixelRatio || 1;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      const drawn = draw(ctx, model, view.current, width, HEIGHT, {
        text: colour('--text', '#1f2328'),
        muted: colour('--muted', '#5d6878'),
        border: colour('--border', '#dde1e7'),
        background: colour('--panel', '#ffffff'),
      });
      // figures for the bench (bench/timeline.bench.ts): the last frame's cost and the first paint
      c.dataset.drawMs = (performance.now() - t0).toFixed(2);
      c.dataset.drawn = String(drawn);
      if (!painted.current) {
        painted.current = true;
        c.dataset.firstPaintMs = (performance.now() - asked).toFixed(0);
        c.dataset.ready = 'true';
      }
    });
  };

  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(HEIGHT * dpr);
    redraw();
    // wheel: zoom at the pointer (a passive listener cannot stop the page from scrolling)
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const rect = c.getBoundingClientRect();
      const x = e.clientX - rect.left - GUTTER;
      const v = view.current;
      const at = v.t0 + (Math.max(x, 0) / Math.max(width - GUTTER, 1)) * (v.t1 - v.t0);
      view.current = zoom(v, Math.exp(e.deltaY * 0.002), at, model.spanUs);
      setTip(null);
      redraw();
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- redraw reads refs and these props
  }, [model, width]);

  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    if (drag.current) {
      const v = view.current;
      const dx = x - drag.current.x;
      const dy = y - drag.current.y;
      const usPerPx = (v.t1 - v.t0) / Math.max(width - GUTTER, 1);
      const dr = Math.trunc(dy / LANE_H);
      view.current = pan(v, -dx * usPerPx, -dr, model.spanUs, laneCount);
      drag.current = { x, y: dr ? y : drag.current.y };
      redraw();
      return;
    }
    const i = hit(model, view.current, width, x, y);
    setTip(i === null ? null : { x, y, i });
  };

  const ev = tip ? tip.i : null;
  const laneOf = (i: number) => model.lanes.find((l) => i >= l.from && i < l.to)!;
  return (
    <div ref={box} style={{ position: 'relative', width: '100%' }}>
      <canvas
        ref={canvas}
        data-testid="timeline-canvas"
        aria-label={t(`${NS}ui.timeline.title`)}
        style={{
          width: '100%',
          height: HEIGHT,
          display: 'block',
          cursor: drag.current ? 'grabbing' : 'grab',
          border: '1px solid var(--border)',
        }}
        onMouseDown={(e) => {
          const rect = e.currentTarget.getBoundingClientRect();
          drag.current = { x: e.clientX - rect.left, y: e.clientY - rect.top };
          setTip(null);
        }}
        onMouseUp={() => (drag.current = null)}
        onMouseLeave={() => {
          drag.current = null;
          setTip(null);
        }}
        onMouseMove={onMove}
        onDoubleClick={() => {
          view.current = { t0: 0, t1: model.spanUs, row: 0 };
          redraw();
        }}
      />
      {ev !== null && tip && (
        // text nodes only: a name from the trace is shown as text, never as markup
        <div
          className="small"
          data-testid="timeline-tooltip"
          style={{
            position: 'absolute',
            left: Math.min(tip.x + 12, width - 260),
            top: Math.min(tip.y + 12, HEIGHT + AXIS_H),
            maxWidth: 320,
            background: 'var(--panel, #fff)',
            border: '1px solid var(--border)',
            padding: '4px 6px',
            pointerEvents: 'none',
            wordBreak: 'break-all',
          }}
        >
          <div>
            <code>{model.names[model.name[ev]!]}</code>
          </div>
          <div>
            {t(`${NS}ui.timeline.duration`)}: {fmtUs(model.dur[ev]!)} · {t(`${NS}ui.timeline.at`)}:{' '}
            {fmtUs(model.start[ev]!)}
          </div>
          <div className="muted">{model.tracks[laneOf(ev).track]!.name}</div>
        </div>
      )}
    </div>
  );
}
