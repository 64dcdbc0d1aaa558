import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { RunBlock, useJobAction } from '../shared/RunBlock';

const NS = 'stage-profiling:';

/**
 * Imports profiler output into the session: a folder on this machine (`profiling.import`) or the
 * same folder on one or several hosts, copied over SFTP and read as one (`profiling.gather`).
 */
export function ImportForm(props: {
  sessionId: number;
  hosts: string[];
  onImported: (id: number) => void;
}) {
  const { t } = useTranslation();
  const [where, setWhere] = useState<'local' | 'remote'>('local');
  const [dir, setDir] = useState('');
  const [picked, setPicked] = useState<string[]>(props.hosts.slice(0, 1));
  const [worldSize, setWorldSize] = useState('');
  const local = useJobAction('profiling.import');
  const remote = useJobAction('profiling.gather');
  const run = where === 'local' ? local : remote;
  const done = { onSuccess: (r: { stageRunId: number }) => props.onImported(r.stageRunId) };
  return (
    <form
      className="scan-form"
      data-testid="profiling-import"
      onSubmit={(e) => {
        e.preventDefault();
        if (where === 'local') local.start({ dir: dir.trim(), sessionId: props.sessionId }, done);
        else
          remote.start(
            {
              hosts: props.hosts.filter((h) => picked.includes(h)),
              dir: dir.trim(),
              sessionId: props.sessionId,
              ...(Number(worldSize) > 0 ? { worldSize: Number(worldSize) } : {}),
            },
            done,
          );
      }}
    >
      <h3 style={{ flexBasis: '100%', margin: 0 }}>{t(`${NS}ui.import.title`)}</h3>
      <label>
        <span>{t(`${NS}ui.import.where`)}</span>
        <select
          value={where}
          onChange={(e) => setWhere(e.target.value as typeof where)}
          data-testid="profiling-import-where"
        >
          <option value="local">{t(`${NS}ui.import.local`)}</option>
          {props.hosts.length > 0 && <option value="remote">{t(`${NS}ui.import.remote`)}</option>}
        </select>
      </label>
      {where === 'remote' && (
        <fieldset>
          <legend>{t(`${NS}ui.import.hosts`)}</legend>
          {props.hosts.map((h) => (
            <label key={h} className="check">
              <input
                type="checkbox"
                checked={picked.includes(h)}
                onChange={(e) =>
                  setPicked((xs) => (e.target.checked ? [...xs, h] : xs.filter((x) => x !== h)))
                }
              />
              <span>{h}</span>
            </label>
          ))}
        </fieldset>
      )}
      <label className="grow">
        <span>{t(`${NS}ui.import.dir`)}</span>
        <input
          value={dir}
          required
          placeholder={where === 'local' ? '/data/prof/run1_ascend_pt' : '~/prof'}
          onChange={(e) => setDir(e.target.value)}
          data-testid="profiling-import-dir"
        />
      </label>
      {where === 'remote' && (
        <label>
          <span>{t(`${NS}ui.import.worldSize`)}</span>
          <input
            type="number"
            min={1}
            value={worldSize}
            onChange={(e) => setWorldSize(e.target.value)}
          />
        </label>
      )}
      <button
        type="submit"
        disabled={run.running || (where === 'remote' && !picked.length)}
        data-testid="profiling-import-submit"
      >
        {t(`${NS}ui.import.submit`)}
      </button>
      <RunBlock run={run} />
    </form>
  );
}
