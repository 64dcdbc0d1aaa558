import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { isWaivable, type CheckOutcome, type StageRunRecord } from '../../../../shared/api';
import { WaiveControls, WaiverNote } from '../shared/Waiver';
import { Evidence } from '../shared/Evidence';
import { hasEvidence } from '../../../../shared/api/evidence';
import { InlineCode, plainText } from '../../components/InlineCode';
import type { DistributedResult } from '../../../../shared/stages/distributed/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { useText } from '../../i18n';
import { RunBlock, useJobAction } from '../shared/RunBlock';
import { worstStatus } from '../../../../shared/stages/distributed/worst';
import { hostChoices, hostsToRun } from './launch-hosts';
import { StageStatusBadge, StatusBadge } from '../shared/StageStatus';
import { statusClass } from '../shared/status';
import type { StageViewProps } from '../shared/types';

const NS = 'stage-distributed:';
const MARK: Record<string, string> = { pass: '✓', skip: '–', warn: '!', fail: '✗', error: '?' };
/** The check an outcome id belongs to (`dist.link@node1#3` → `dist.link`). */
const baseId = (id: string) => id.split('@')[0]!;

/**
 * The distributed stage: pick hosts or a tag (rank table and collective optional), then the
 * newest run as a fleet matrix (hosts × checks; a cell opens its outcomes and evidence), the NPU
 * link grid per host, the values that disagree, the collective's bandwidth by message size and
 * the logs of a failed launch. Charts are plain CSS bars, as in the profiling view.
 */
export function DistributedView(props: StageViewProps) {
  const { t } = useTranslation();
  const runs = props.runs.filter((r) => r.status !== 'running').sort((a, b) => b.id - a.id);
  const latest = runs[0] ?? null;
  return (
    <div className="distributed-stage" data-testid="distributed-stage">
      <Launch sessionId={props.session.id} hosts={props.hosts} />
      {latest ? <Run run={latest} /> : <p className="muted">{t(`${NS}ui.noRun`)}</p>}
    </div>
  );
}

function Launch(props: { sessionId: number; hosts: string[] }) {
  const { t } = useTranslation();
  const all = useCall('hosts.list', {});
  const known = all.data?.map((h) => h.name) ?? [];
  const choices = hostChoices(props.hosts, known);
  const tags = [
    ...new Set((all.data ?? []).flatMap((h) => [...h.tags, ...(h.group ? [h.group] : [])])),
  ].sort();
  const [picked, setPicked] = useState<string[] | null>(null);
  const chosen = hostsToRun(picked, props.hosts, choices);
  const [tag, setTag] = useState('');
  const [rankTable, setRankTable] = useState('');
  const [collective, setCollective] = useState(true);
  const [deadline, setDeadline] = useState('600');
  const run = useJobAction('stages.run');
  const toggle = (h: string) =>
    setPicked(chosen.includes(h) ? chosen.filter((x) => x !== h) : [...chosen, h]);
  const start = () =>
    run.start({
      stage: 'distributed',
      sessionId: props.sessionId,
      ...(tag ? { tag } : { hosts: chosen }),
      ...(rankTable.trim() ? { rankTable, rankTableFile: 'hccl.json' } : {}),
      collective,
      // the stage's own bounds (10–7200 s); anything else keeps its default
      ...(/^\d+$/.test(deadline) && +deadline >= 10 && +deadline <= 7200
        ? { collectiveDeadlineS: +deadline }
        : {}),
    });
  return (
    <section className="panel" data-testid="distributed-launch">
      <fieldset disabled={run.running}>
        <legend>{t(`${NS}ui.pick`)}</legend>
        {choices.map((h) => (
          <label key={h} style={{ marginRight: 12 }}>
            <input
              type="checkbox"
              checked={!tag && chosen.includes(h)}
              disabled={!!tag}
              onChange={() => toggle(h)}
              data-testid={`dist-pick-${h}`}
            />{' '}
            {h}
          </label>
        ))}
        <label>
          {t(`${NS}ui.pickTag`)}{' '}
          <select value={tag} onChange={(e) => setTag(e.target.value)} data-testid="dist-tag">
            <option value="">{t(`${NS}ui.anyTag`)}</option>
            {tags.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </label>
      </fieldset>
      <label className="block">
        <span>{t(`${NS}ui.rankTable`)}</span>
        <textarea
          rows={3}
          value={rankTable}
          placeholder={t(`${NS}ui.rankTableHint`)}
          onChange={(e) => setRankTable(e.target.value)}
          data-testid="dist-rank-table"
        />
      </label>
      <label>
        <input
          type="checkbox"
          checked={collective}
          onChange={(e) => setCollective(e.target.checked)}
          data-testid="dist-collective"
        />{' '}
        {t(`${NS}ui.collective`)}
      </label>{' '}
      <label title={t(`${NS}ui.deadlineHint`)}>
        {t(`${NS}ui.deadline`)}{' '}
        <input
          type="number"
          min={10}
          max={7200}
          style={{ width: 80 }}
          value={deadline}
          disabled={!collective}
          onChange={(e) => setDeadline(e.target.value)}
          data-testid="dist-deadline"
        />
      </label>{' '}
      <button
        className="primary"
        disabled={run.running || (!tag && chosen.length === 0)}
        onClick={start}
        data-testid="run-stage"
      >
        {t(`${NS}ui.run`)}
      </button>
      <RunBlock run={run} />
    </section>
  );
}

function Run({ run }: { run: StageRunRecord }) {
  const doc = useCall('distributed.get', { stageRunId: run.id });
  return (
    <>
      <Matrix run={run} hosts={doc.data?.hosts.map((h) => h.host) ?? null} />
      {doc.error && <ErrorText error={doc.error} />}
      {doc.data && (
        <>
          <DeviceGrid doc={doc.data} />
          <Disagreements doc={doc.data} />
          <Collective doc={doc.data} />
        </>
      )}
    </>
  );
}

function Matrix({ run, hosts }: { run: StageRunRecord; hosts: string[] | null }) {
  const { t } = useTranslation();
  const show = useText();
  const [open, setOpen] = useState<{ host: string; check: string } | null>(null);
  const perHost = run.checks.filter((c) => c.host !== undefined);
  const fleet = run.checks.filter((c) => c.host === undefined);
  const ids = useMemo(() => [...new Set(perHost.map((c) => baseId(c.id)))], [perHost]);
  const rows = hosts ?? [...new Set(perHost.map((c) => c.host!))];
  const title = (id: string) => show(run.checks.find((c) => baseId(c.id) === id)?.title);
  const cell = (host: string, id: string) =>
    perHost.filter((c) => c.host === host && baseId(c.id) === id);
  const opened = open ? cell(open.host, open.check) : [];
  return (
    <section data-testid="distributed-matrix">
      <h3>
        {t(`${NS}ui.matrix`)} <StageStatusBadge status={run.status} />
      </h3>
      <div style={{ overflowX: 'auto' }}>
        <table className="table sticky-first">
          <thead>
            <tr>
              <th>{t(`${NS}ui.host`)}</th>
              {ids.map((id) => (
                <th key={id} title={id} className="small">
                  {title(id)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((host) => (
              <tr key={host} data-testid={`dist-row-${host}`}>
                <td>
                  <code>{host}</code>
                </td>
                {ids.map((id) => {
                  const mine = cell(host, id);
                  if (!mine.length) return <td key={id}>{t(`${NS}ui.none`)}</td>;
                  // a waived failure no longer counts against the cell, as it does not against
                  // the stage; the cell says it was waived
                  const live = mine.filter((c) => !(c.waiver && isWaivable(c.status)));
                  const waived = live.length < mine.length;
                  const worst = worstStatus(live.length ? live.map((c) => c.status) : ['pass']);
                  const shown = live.find((c) => c.status === worst) ?? mine[0]!;
                  return (
                    <td key={id}>
                      <button
                        className={`badge ${statusClass(worst)}${waived ? ' waived' : ''}`}
                        title={`${plainText(show(shown.summary))}${waived ? t('common.paren', { text: t('sessions.rail.waived', { count: mine.length - live.length }) }) : ''}`}
                        onClick={() => setOpen({ host, check: id })}
                        data-testid={`dist-cell-${host}-${id}`}
                        data-status={worst}
                        data-waived={waived || undefined}
                      >
                        {MARK[worst] ?? worst}
                        {waived && '*'}
                      </button>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {open && (
        <div className="panel" role="dialog" data-testid="dist-evidence">
          <header>
            <strong>
              {open.host} · {title(open.check)}
            </strong>{' '}
            <button onClick={() => setOpen(null)} data-testid="dist-evidence-close">
              {t(`${NS}ui.close`)}
            </button>
          </header>
          {opened.map((c) => (
            <Outcome key={c.id} c={c} run={run} />
          ))}
        </div>
      )}
      <h3>{t(`${NS}ui.fleetWide`)}</h3>
      {fleet.map((c) => (
        <Outcome key={c.id} c={c} run={run} />
      ))}
    </section>
  );
}

function Outcome({ c, run }: { c: CheckOutcome; run: StageRunRecord }) {
  const { t } = useTranslation();
  const show = useText();
  return (
    <div className={`notice ${statusClass(c.status)}`} data-testid={`dist-outcome-${c.id}`}>
      <StatusBadge status={c.status} /> <strong>{show(c.title)}</strong>{' '}
      {c.device !== undefined && (
        <code>
          {t(`${NS}ui.device`)} {c.device}
        </code>
      )}
      <div>
        <InlineCode text={show(c.summary)} />
      </div>
      {c.remediation && (
        <div className="small">
          → <InlineCode text={show(c.remediation)} />
        </div>
      )}
      <WaiverNote check={c} />
      <WaiveControls check={c} sessionId={run.sessionId} host={run.host} />
      {hasEvidence(c.evidence) && (
        <details>
          <summary>{t(`${NS}ui.evidence`)}</summary>
          <Evidence value={c.evidence} />
        </details>
      )}
    </div>
  );
}

function DeviceGrid({ doc }: { doc: DistributedResult }) {
  const { t } = useTranslation();
  const hosts = doc.hosts.filter((h) => h.devices.length);
  if (!hosts.length) return null;
  const state = (link: string | null) =>
    link === 'UP' ? 'pass' : link === 'DOWN' ? 'fail' : 'warn';
  return (
    <section data-testid="distributed-devices">
      <h3>{t(`${NS}ui.devices`)}</h3>
      {hosts.map((h) => (
        <div
          key={h.host}
          className="small"
          style={{ display: 'flex', gap: 4, alignItems: 'center' }}
        >
          <code style={{ minWidth: 140 }}>{h.host}</code>
          {h.devices.map((d) => (
            <span
              key={d.id}
              className={`badge ${statusClass(state(d.link))}`}
              title={`${t(`${NS}ui.device`)} ${d.id}: ${d.link ?? '?'} ${d.ip?.address ?? ''} ${d.netHealth ?? ''}`}
              data-testid={`dist-device-${h.host}-${d.id}`}
              data-status={state(d.link)}
            >
              {d.id}
            </span>
          ))}
        </div>
      ))}
    </section>
  );
}

function Disagreements({ doc }: { doc: DistributedResult }) {
  const { t } = useTranslation();
  return (
    <section data-testid="distributed-disagree">
      <h3>{t(`${NS}ui.disagree`)}</h3>
      {!doc.disagreements.length && <p className="muted">{t(`${NS}ui.noDisagree`)}</p>}
      {doc.disagreements.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th>{t(`${NS}ui.item`)}</th>
              {doc.disagreements[0]!.values.map((v) => (
                <th key={v.host}>
                  <code>{v.host}</code>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {doc.disagreements.map((d) => (
              <tr key={d.item} data-testid={`dist-disagree-${d.item}`}>
                <td>
                  <code>{d.item}</code>
                </td>
                {d.values.map((v) => (
                  <td key={v.host}>{v.value ?? t(`${NS}ui.none`)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Collective({ doc }: { doc: DistributedResult }) {
  const { t } = useTranslation();
  const show = useText();
  const c = doc.collective;
  if (!c) return null;
  const max = Math.max(...c.bandwidth.map((b) => b.busBandwidthGBs), 1e-9);
  // the host the error names failed first; the others were stopped because of it: its logs first
  // and open, since a stopped rank's log says little more than that it was stopped
  const first = c.error?.params?.host;
  const logs = [...c.logs].sort((a, b) => Number(b.host === first) - Number(a.host === first));
  return (
    <section data-testid="distributed-collective">
      <h3>{t(`${NS}title.collective`)}</h3>
      <p>
        <StatusBadge status={c.ok ? 'pass' : 'fail'} /> <code>{c.launcher}</code> · {c.backend} ·{' '}
        {t(`${NS}report.ranks`, { count: c.worldSize })}
        {c.busBandwidthGBs !== undefined ? ` · ${c.busBandwidthGBs.toFixed(2)} GB/s` : ''}
      </p>
      {c.error && <p>{show(c.error)}</p>}
      {c.cause && (
        <p className="small">
          {show(c.cause.message)} → {show(c.cause.fix)}
        </p>
      )}
      {c.notes.map((n, i) => (
        <p key={i} className="muted small">
          {show(n)}
        </p>
      ))}
      {c.bandwidth.length > 0 && (
        <div data-testid="distributed-bandwidth">
          <h4>{t(`${NS}ui.bandwidth`)}</h4>
          {c.bandwidth.map((b) => (
            <div
              key={b.bytes}
              className="small"
              style={{ display: 'flex', gap: 8, alignItems: 'center' }}
            >
              <span style={{ width: 110 }}>{bytes(b.bytes)}</span>
              <div style={{ flex: 1, background: '#d0d7de', height: 8, borderRadius: 4 }}>
                <div
                  style={{
                    width: `${(100 * b.busBandwidthGBs) / max}%`,
                    height: 8,
                    borderRadius: 4,
                    background: '#0969da',
                  }}
                />
              </div>
              <span style={{ width: 90 }}>
                {b.busBandwidthGBs.toFixed(3)} {t(`${NS}ui.gbs`)}
              </span>
            </div>
          ))}
        </div>
      )}
      {!c.ok && c.logs.length > 0 && (
        <div data-testid="distributed-logs">
          <h4>{t(`${NS}ui.logs`)}</h4>
          {logs.map((l, i) => (
            <details key={i} open={i === 0 && l.host === first}>
              <summary>
                <code>{l.host}</code>
                {l.rank !== undefined ? ` · ${t(`${NS}ui.rank`)} ${l.rank}` : ''} ·{' '}
                <code>{l.file}</code>
              </summary>
              <pre className="small">{l.text.slice(-50_000)}</pre>
            </details>
          ))}
        </div>
      )}
    </section>
  );
}

const bytes = (n: number) =>
  n >= 1 << 30
    ? `${n / (1 << 30)} GiB`
    : n >= 1 << 20
      ? `${n / (1 << 20)} MiB`
      : n >= 1024
        ? `${n / 1024} KiB`
        : `${n} B`;
