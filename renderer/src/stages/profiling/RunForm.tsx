import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionRecord } from '../../../../shared/api';
import { RunBlock, useJobAction } from '../shared/RunBlock';

const NS = 'stage-profiling:';
const LEVELS = ['Level0', 'Level1', 'Level2'] as const;

/** What the form remembers per session (the entry is typed once, not every run). */
interface Saved {
  hosts?: string[];
  entry?: string;
  script?: string;
  steps?: string;
  level?: (typeof LEVELS)[number];
  ranks?: string;
  perNpu?: boolean;
}

/**
 * Starts the profiling stage on one or several of the session's hosts (`stages.run` with the
 * profiling input): entry or script, steps, level, activities, and ranks per host (torchrun).
 * `onStarted` gets the stage run's id so the view shows it once the job ends.
 */
export function RunForm(props: {
  session: SessionRecord;
  hosts: string[];
  onStarted: (id: number) => void;
}) {
  const { t } = useTranslation();
  const key = `amw.profiling.${props.session.id}`;
  const [saved] = useState<Saved>(() => JSON.parse(localStorage.getItem(key) ?? '{}') as Saved);
  // the hosts picked last time that are still in the session, else the first one
  const [picked, setPicked] = useState<string[]>(() => {
    const kept = saved.hosts?.filter((h) => props.hosts.includes(h)) ?? [];
    return kept.length ? kept : props.hosts.slice(0, 1);
  });
  const [entry, setEntry] = useState(saved.entry ?? '');
  const [script, setScript] = useState(saved.script ?? '');
  const [steps, setSteps] = useState(saved.steps ?? '5');
  const [level, setLevel] = useState<(typeof LEVELS)[number]>(saved.level ?? 'Level1');
  const [cpu, setCpu] = useState(true);
  const [npu, setNpu] = useState(true);
  const [ranks, setRanks] = useState(saved.ranks ?? '1');
  const [perNpu, setPerNpu] = useState(saved.perNpu ?? false);
  const run = useJobAction('stages.run');
  const toggle = (h: string, on: boolean) =>
    setPicked((xs) => (on ? [...xs.filter((x) => x !== h), h] : xs.filter((x) => x !== h)));
  if (!props.hosts.length) return <p className="muted">{t(`${NS}ui.form.noHosts`)}</p>;
  const useScript = !entry.trim() && !!script.trim();
  return (
    <form
      className="scan-form"
      data-testid="profiling-form"
      onSubmit={(e) => {
        e.preventDefault();
        const chosen = props.hosts.filter((h) => picked.includes(h));
        localStorage.setItem(
          key,
          JSON.stringify({
            hosts: chosen,
            entry: entry.trim(),
            script: script.trim(),
            steps,
            level,
            ranks,
            perNpu,
          } satisfies Saved),
        );
        const n = Number(ranks);
        run.start(
          {
            stage: 'profiling',
            hosts: chosen,
            sessionId: props.session.id,
            ...(useScript ? { script: script.trim() } : { entry: entry.trim() }),
            ...(useScript ? {} : { steps: Number(steps) || 5 }),
            level,
            activities: [...(cpu ? ['cpu' as const] : []), ...(npu ? ['npu' as const] : [])],
            ...(perNpu ? { ranksPerHost: 'npus' as const } : n > 1 ? { ranksPerHost: n } : {}),
          },
          { onSuccess: (r) => props.onStarted(r.stageRunId) },
        );
      }}
    >
      <h3 style={{ flexBasis: '100%', margin: 0 }}>{t(`${NS}ui.form.title`)}</h3>
      <fieldset className="grow" data-testid="profiling-hosts">
        <legend>{t(`${NS}ui.form.hosts`)}</legend>
        {props.hosts.map((h) => (
          <label key={h} className="check">
            <input
              type="checkbox"
              checked={picked.includes(h)}
              onChange={(e) => toggle(h, e.target.checked)}
              data-testid={`profiling-host-${h}`}
            />
            <span>{h}</span>
          </label>
        ))}
      </fieldset>
      <label className="grow">
        <span>{t(`${NS}ui.form.entry`)}</span>
        <input
          data-testid="profiling-entry"
          value={entry}
          required={!script.trim()}
          pattern="[^:]+:[A-Za-z_][A-Za-z0-9_]*"
          title={t('common.entryFormat')}
          placeholder="train/model.py:build_model_and_batches"
          onChange={(e) => setEntry(e.target.value)}
        />
      </label>
      <label className="grow">
        <span>{t(`${NS}ui.form.script`)}</span>
        <input
          data-testid="profiling-script"
          value={script}
          disabled={!!entry.trim()}
          placeholder="train.py"
          onChange={(e) => setScript(e.target.value)}
        />
      </label>
      {!useScript && (
        <label>
          <span>{t(`${NS}ui.form.steps`)}</span>
          <input
            data-testid="profiling-steps"
            type="number"
            min={1}
            max={100}
            value={steps}
            onChange={(e) => setSteps(e.target.value)}
          />
        </label>
      )}
      <label>
        <span>{t(`${NS}ui.form.level`)}</span>
        <select
          value={level}
          onChange={(e) => setLevel(e.target.value as typeof level)}
          data-testid="profiling-level"
        >
          {LEVELS.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>{t(`${NS}ui.form.activities`)}</legend>
        <label className="check">
          <input
            type="checkbox"
            checked={cpu}
            disabled={cpu && !npu}
            onChange={(e) => setCpu(e.target.checked)}
          />
          <span>{t(`${NS}ui.form.cpu`)}</span>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={npu}
            disabled={npu && !cpu}
            onChange={(e) => setNpu(e.target.checked)}
          />
          <span>{t(`${NS}ui.form.npu`)}</span>
        </label>
      </fieldset>
      <label>
        <span>{t(`${NS}ui.form.ranks`)}</span>
        <input
          data-testid="profiling-ranks"
          type="number"
          min={1}
          max={64}
          value={ranks}
          disabled={perNpu}
          onChange={(e) => setRanks(e.target.value)}
        />
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={perNpu}
          onChange={(e) => setPerNpu(e.target.checked)}
          data-testid="profiling-per-npu"
        />
        <span>{t(`${NS}ui.form.perNpu`)}</span>
      </label>
      <button
        className="primary"
        type="submit"
        disabled={run.running || !picked.length}
        data-testid="profiling-run"
      >
        {t(`${NS}ui.form.run`)}
      </button>
      <p className="muted small" style={{ flexBasis: '100%' }}>
        {t(`${NS}ui.form.ranksHelp`)}
      </p>
      <RunBlock run={run} />
    </form>
  );
}
