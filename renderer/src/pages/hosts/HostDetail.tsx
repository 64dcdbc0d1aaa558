import { lazy, Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCAL_HOST_NAME, type Inventory } from '../../../../shared/api';
import { useAction, useCall } from '../../api';
import { AddHostDialog } from '../../components/AddHostDialog';
import { ErrorLine, ErrorText } from '../../components/ErrorText';
import { Icon } from '../../components/Icon';
import { useJob } from '../../components/JobsDrawer';
import { dash, healthClass, mb } from './format';
import { Monitor } from './Monitor';
import { uiDateTime, uiJobStep } from '../../format';

// xterm.js is large and only needed when a terminal opens
const TerminalView = lazy(() =>
  import('./TerminalView').then((m) => ({ default: m.TerminalView })),
);

const TABS = ['inventory', 'monitor', 'terminal'] as const;

export function HostDetail(props: { name: string; onBack: () => void }) {
  const { t } = useTranslation();
  const host = useCall('hosts.get', { name: props.name });
  const snapshots = useCall('inventory.list', { name: props.name });
  const test = useAction('hosts.test');
  const take = useAction('inventory.take', ['jobs.list']);
  const remove = useAction('hosts.remove', ['hosts.list', 'fleet.table']);
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [editing, setEditing] = useState(false);
  const info = useCall('app.info', {});
  const rememberPw = useAction('hosts.rememberPassword', ['hosts.get']);
  const forgetPw = useAction('hosts.forgetPassword', ['hosts.get']);
  const job = useJob(take.data?.jobId ?? null);
  const latestId = host.data?.inventory?.id ?? null;
  const [diffWith, setDiffWith] = useState<number | null>(null);
  const [tab, setTab] = useState<(typeof TABS)[number]>('inventory');

  const local = props.name === LOCAL_HOST_NAME;
  const pw = password && !local ? { password } : {};
  return (
    <section className="page" data-testid="host-detail">
      <header className="page-head">
        <button className="icon-button" onClick={props.onBack} aria-label={t('common.back')}>
          ←
        </button>
        <span className="page-icon">
          <Icon name="hosts" size={22} />
        </span>
        <div>
          {/* this machine by its name in words; `local` is what the CLI calls it */}
          <h1 data-testid="host-title">{local ? t('local.button') : props.name}</h1>
          {host.data && local && (
            <span className="muted small">
              <code>{LOCAL_HOST_NAME}</code> · {t('local.address')}
            </span>
          )}
          {host.data && !local && (
            <span className="muted small">
              {`${host.data.username ? `${host.data.username}@` : ''}${host.data.hostname}:${host.data.port}`}
              {host.data.jump ? ` · ${t('hosts.via', { jump: host.data.jump })}` : ''}
            </span>
          )}
        </div>
        <div className="spacer" />
        {/* this machine is not reached over SSH: no password to give, remember or forget */}
        {!local && (
          <input
            type="password"
            className="password"
            placeholder={t('hosts.passwordPlaceholder')}
            value={password}
            autoComplete="off"
            onChange={(e) => setPassword(e.target.value)}
            aria-label={t('hosts.passwordPlaceholder')}
            data-testid="host-password"
          />
        )}
        {!local && info.data?.canRememberSecrets && password && (
          <label className="inline">
            <input
              type="checkbox"
              checked={remember}
              onChange={(e) => setRemember(e.target.checked)}
            />
            {t('hosts.rememberPassword')}
          </label>
        )}
        {!local && host.data?.savedSecret && (
          <button
            onClick={() => forgetPw.mutate({ name: props.name })}
            title={t('hosts.savedPasswordHint')}
          >
            {t('hosts.forgetPassword')}
          </button>
        )}
        <button
          onClick={() =>
            test.mutate(
              { name: props.name, ...pw },
              {
                // remember only a password that has just been shown to work
                onSuccess: (r) => {
                  if (r.ok && remember && password)
                    rememberPw.mutate({ name: props.name, password });
                },
              },
            )
          }
          data-testid="host-test"
          disabled={test.isPending}
        >
          {t('hosts.test')}
        </button>
        <button
          className="primary"
          onClick={() => take.mutate({ name: props.name, ...pw })}
          data-testid="host-inventory"
          disabled={job?.status === 'running'}
        >
          {t('hosts.inventory')}
        </button>
        {/* this machine has no address, port, user or key to edit */}
        {!local && (
          <button onClick={() => setEditing(true)} data-testid="host-edit">
            {t('hosts.edit')}
          </button>
        )}
        {/* this machine is always there: nothing to remove */}
        {!local && (
          <button
            className="danger"
            data-testid="host-remove"
            onClick={() => {
              if (confirm(t('hosts.removeConfirm', { name: props.name })))
                remove.mutate({ name: props.name }, { onSuccess: props.onBack });
            }}
          >
            {t('hosts.remove')}
          </button>
        )}
      </header>
      {host.error && <ErrorText error={host.error} />}
      {rememberPw.error && <ErrorText error={rememberPw.error} />}
      {editing && host.data && (
        <AddHostDialog
          initial={host.data}
          onClose={() => setEditing(false)}
          onAdded={(name) => {
            setEditing(false);
            if (name !== props.name) location.hash = `#/hosts/${encodeURIComponent(name)}`;
          }}
        />
      )}
      {remove.error && <ErrorText error={remove.error} />}

      {test.data && (
        <div
          className={`callout ${test.data.ok ? 'ok' : 'fail'}`}
          data-testid="test-result"
          data-ok={test.data.ok}
        >
          {test.data.ok ? (
            <p>
              {t('cli.testOk', {
                name: props.name,
                ms: test.data.latencyMs,
                system: test.data.system ?? '',
              })}
            </p>
          ) : (
            <>
              <p>
                <ErrorLine error={test.data.error!} />
              </p>
              {test.data.error!.code === 'HOST_KEY_MISMATCH' && (
                <MismatchFacts detail={test.data.error!.detail} />
              )}
            </>
          )}
        </div>
      )}
      {test.error && <ErrorText error={test.error} />}
      {take.error && <ErrorText error={take.error} />}
      {job && job.status === 'running' && (
        <p className="muted" data-testid="inventory-running">
          {job.message ? uiJobStep(job.message) : t('common.loading')}
        </p>
      )}
      {job?.status === 'failed' && job.error && (
        <div className="callout fail" data-testid="inventory-failed">
          <p>
            <ErrorLine error={job.error} />
          </p>
          {job.error.code === 'HOST_KEY_MISMATCH' && <MismatchFacts detail={job.error.detail} />}
        </div>
      )}

      <div className="tabs" role="tablist">
        {/* this machine is not reached over SSH: its terminal is the user's own */}
        {(local ? (['inventory', 'monitor'] as const) : TABS).map((k) => (
          <button
            key={k}
            role="tab"
            aria-selected={tab === k}
            onClick={() => setTab(k)}
            data-testid={`host-tab-${k}`}
          >
            {t(`hosts.tab.${k}`)}
          </button>
        ))}
      </div>
      {tab === 'monitor' && <Monitor name={props.name} password={password || undefined} />}
      {tab === 'terminal' && (
        <Suspense fallback={<p className="muted">{t('common.loading')}</p>}>
          <TerminalView name={props.name} password={password || undefined} />
        </Suspense>
      )}
      {tab === 'inventory' && latestId === null && !job && (
        <p className="muted">{t('hosts.noInventoryYet')}</p>
      )}
      {tab === 'inventory' && latestId !== null && <InventoryView id={latestId} />}

      {tab === 'inventory' && (snapshots.data?.length ?? 0) > 1 && (
        <>
          <h2>{t('hosts.snapshots')}</h2>
          <div className="row">
            <select
              data-testid="diff-with"
              value={diffWith ?? ''}
              onChange={(e) => setDiffWith(e.target.value ? Number(e.target.value) : null)}
            >
              <option value="">{t('hosts.diffPick')}</option>
              {snapshots.data!.slice(1).map((s) => (
                <option key={s.id} value={s.id}>
                  {uiDateTime(s.takenAt)}
                </option>
              ))}
            </select>
          </div>
          {diffWith !== null && latestId !== null && <SnapshotDiff a={diffWith} b={latestId} />}
        </>
      )}
    </section>
  );
}

function MismatchFacts(props: { detail: unknown }) {
  const { t } = useTranslation();
  const d = (props.detail ?? {}) as {
    storedFingerprint?: string;
    offeredFingerprint?: string;
    file?: string;
    line?: number;
  };
  return (
    <dl className="facts" data-testid="mismatch-facts">
      <dt>{t('hosts.hostKey.stored')}</dt>
      <dd>
        <code>{d.storedFingerprint}</code>
      </dd>
      <dt>{t('hosts.hostKey.offered')}</dt>
      <dd>
        <code>{d.offeredFingerprint}</code>
      </dd>
      <dt>{t('hosts.hostKey.where')}</dt>
      <dd>
        <code>{`${d.file}:${d.line}`}</code>
      </dd>
    </dl>
  );
}

function SnapshotDiff(props: { a: number; b: number }) {
  const { t } = useTranslation();
  const diff = useCall('inventory.diff', { a: props.a, b: props.b });
  const rows = (diff.data ?? []).filter((r) => !/^(memoryAvailableMB|disks)/.test(r.path));
  return (
    <table className="table" data-testid="snapshot-diff">
      <thead>
        <tr>
          <th>{t('hosts.diffField')}</th>
          <th>{t('hosts.diffBefore')}</th>
          <th>{t('hosts.diffAfter')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={3} className="muted">
              {t('hosts.diffNone')}
            </td>
          </tr>
        )}
        {rows.map((r) => (
          <tr key={r.path}>
            <td>
              <code>{r.path}</code>
            </td>
            <td>{dash(typeof r.a === 'object' ? JSON.stringify(r.a) : r.a)}</td>
            <td>{dash(typeof r.b === 'object' ? JSON.stringify(r.b) : r.b)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function InventoryView(props: { id: number }) {
  const { t } = useTranslation();
  const snap = useCall('inventory.get', { id: props.id });
  if (snap.error) return <ErrorText error={snap.error} />;
  if (!snap.data) return <p className="muted">{t('common.loading')}</p>;
  const inv: Inventory = snap.data.data;
  const v = inv.versions;
  return (
    <div data-testid="inventory-view">
      <p className="muted small">{t('hosts.takenAt', { time: uiDateTime(inv.takenAt) })}</p>
      <div className="cards">
        <div className="card">
          <h3>{t('hosts.system')}</h3>
          <dl className="facts">
            <dt>OS</dt>
            <dd>{dash(inv.os)}</dd>
            <dt>{t('hosts.kernel')}</dt>
            <dd>{`${dash(inv.kernel)} ${inv.arch ?? ''}`}</dd>
            <dt>CPU</dt>
            <dd>{`${dash(inv.cpu.model)} × ${dash(inv.cpu.cores)}`}</dd>
            <dt>{t('hosts.memory')}</dt>
            <dd>{mb(inv.memoryMB)}</dd>
            <dt>{t('hosts.devices')}</dt>
            <dd>
              {inv.devices.length ? inv.devices.map((d) => d.replace('/dev/', '')).join(' ') : '—'}
            </dd>
          </dl>
        </div>
        <div className="card">
          <h3>{t('hosts.versions')}</h3>
          <dl className="facts" data-testid="versions">
            <dt>CANN</dt>
            <dd data-testid="version-cann">{dash(v.cann)}</dd>
            <dt>{t('hosts.col.driver')}</dt>
            <dd data-testid="version-driver">{dash(v.driver)}</dd>
            <dt>{t('hosts.col.firmware')}</dt>
            <dd>{dash(v.firmware)}</dd>
            <dt>Python</dt>
            <dd>{dash(v.python)}</dd>
            <dt>torch</dt>
            <dd>{dash(v.torch)}</dd>
            <dt>torch_npu</dt>
            <dd>{dash(v.torchNpu)}</dd>
            <dt>set_env.sh</dt>
            <dd>
              {inv.setEnvPath
                ? `${inv.setEnvPath}${inv.envSourcedByDefault ? '' : t('common.paren', { text: t('hosts.notSourced') })}`
                : '—'}
            </dd>
          </dl>
        </div>
      </div>

      <h2>{t('hosts.chips')}</h2>
      {!inv.npu && <p className="muted">{t('hosts.noNpuSmi')}</p>}
      {inv.npu?.error && (
        <div className="callout fail">
          <p>
            <code>npu-smi</code> {inv.npu.error.message}
            {inv.npu.error.meaning ? ` — ${inv.npu.error.meaning}` : ''}
          </p>
        </div>
      )}
      {inv.npu && inv.npu.devices.length > 0 && (
        <table className="table" data-testid="chips-table">
          <thead>
            <tr>
              <th>NPU</th>
              <th>{t('hosts.col.chip')}</th>
              <th>{t('hosts.col.name')}</th>
              <th>{t('hosts.col.health')}</th>
              <th>AICore</th>
              <th>HBM</th>
              <th>{t('hosts.memory')}</th>
              <th>{t('hosts.power')}</th>
              <th>{t('hosts.temp')}</th>
              <th>Bus-Id</th>
            </tr>
          </thead>
          <tbody>
            {inv.npu.devices.map((d) => (
              <tr key={`${d.npu}-${d.chip}`} data-testid="chip-row">
                <td>{d.npu}</td>
                <td>{d.chip}</td>
                <td>{dash(d.name)}</td>
                <td>
                  <span className={`badge ${healthClass(d.health)}`}>{dash(d.health)}</span>
                </td>
                <td>{d.aicorePct === null ? '—' : `${d.aicorePct}%`}</td>
                <td>
                  {d.hbmTotalMB === null ? (
                    '—'
                  ) : (
                    <span className="meter" title={`${d.hbmUsedMB ?? '?'} / ${d.hbmTotalMB} MB`}>
                      <meter min={0} max={d.hbmTotalMB} value={d.hbmUsedMB ?? 0} />
                      <span className="small">{`${mb(d.hbmUsedMB)} / ${mb(d.hbmTotalMB)}`}</span>
                    </span>
                  )}
                </td>
                <td>{d.memTotalMB === null ? '—' : `${mb(d.memUsedMB)} / ${mb(d.memTotalMB)}`}</td>
                <td>{d.powerW === null ? '—' : `${d.powerW} W`}</td>
                <td>{d.tempC === null ? '—' : `${d.tempC} °C`}</td>
                <td>
                  <code>{dash(d.busId)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {inv.npu && inv.npu.processes.length > 0 && (
        <>
          <h3>{t('hosts.processes')}</h3>
          <table className="table">
            <tbody>
              {inv.npu.processes.map((p) => (
                <tr key={`${p.npu}-${p.pid}`}>
                  <td>{`NPU ${p.npu}${p.chip === null ? '' : `.${p.chip}`}`}</td>
                  <td>{p.pid}</td>
                  <td>{p.name || '—'}</td>
                  <td>{mb(p.memMB)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {Object.keys(inv.env).length > 0 && (
        <details>
          <summary>{t('hosts.env')}</summary>
          <pre className="cli">
            {Object.entries(inv.env)
              .map(([k, val]) => `${k}=${val}`)
              .join('\n')}
          </pre>
        </details>
      )}
      {[...inv.notes, ...inv.warnings, ...(inv.npu?.warnings ?? [])].length > 0 && (
        <details open>
          <summary>{t('hosts.notes')}</summary>
          <ul>
            {[...inv.notes, ...inv.warnings, ...(inv.npu?.warnings ?? [])].map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
