import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCAL_HOST_NAME } from '../../../../shared/api';
import { PageHead } from '../../components/PageHead';
import { useCall } from '../../api';
import { AddHostDialog } from '../../components/AddHostDialog';
import { ErrorText } from '../../components/ErrorText';
import { ImportDialog } from '../../components/ImportDialog';
import { StartSteps } from '../StartPage';
import { FleetTable } from './FleetTable';
import { HostDetail } from './HostDetail';
import { dash, healthClass } from './format';

export function HostsPage(props: { selected: string | null; open: (name: string | null) => void }) {
  const { t } = useTranslation();
  const hosts = useCall('hosts.list', {});
  const [dialog, setDialog] = useState<'add' | 'import' | null>(null);
  const [tab, setTab] = useState<'hosts' | 'fleet'>('hosts');

  // keyed by host: a job banner, typed password or open tab never carries over to the next host
  if (props.selected)
    return (
      <HostDetail key={props.selected} name={props.selected} onBack={() => props.open(null)} />
    );
  const list = hosts.data ?? [];
  return (
    <section className="page" data-testid="page-hosts">
      <PageHead icon="hosts" title={t('pages.hosts.title')}>
        <div className="spacer" />
        <button
          onClick={() => props.open(LOCAL_HOST_NAME)}
          data-testid="open-local-host"
          title={t('local.hint')}
        >
          {t('local.button')}
        </button>
        <button onClick={() => setDialog('import')} data-testid="open-import">
          {t('hosts.importButton')}
        </button>
        <button className="primary" onClick={() => setDialog('add')} data-testid="open-add-host">
          {t('hosts.addButton')}
        </button>
      </PageHead>
      {hosts.error && <ErrorText error={hosts.error} />}
      {hosts.data && list.length === 0 && (
        <div className="empty">
          <p className="lead">{t('pages.hosts.lead')}</p>
          <StartSteps page="hosts" />
        </div>
      )}
      {list.length > 0 && (
        <>
          <div className="tabs" role="tablist">
            <button
              role="tab"
              aria-selected={tab === 'hosts'}
              onClick={() => setTab('hosts')}
              data-testid="tab-hosts"
            >
              {t('hosts.tabHosts')}
            </button>
            <button
              role="tab"
              aria-selected={tab === 'fleet'}
              onClick={() => setTab('fleet')}
              data-testid="tab-fleet"
            >
              {t('hosts.tabFleet')}
            </button>
          </div>
          {tab === 'fleet' ? (
            <FleetTable open={props.open} />
          ) : (
            <table className="table hosts" data-testid="hosts-table">
              <thead>
                <tr>
                  <th>{t('hosts.col.name')}</th>
                  <th>{t('hosts.col.address')}</th>
                  <th>{t('hosts.col.chips')}</th>
                  <th>{t('hosts.col.health')}</th>
                  <th>CANN</th>
                  <th>{t('hosts.col.driver')}</th>
                  <th>torch_npu</th>
                  <th>{t('hosts.col.group')}</th>
                </tr>
              </thead>
              <tbody>
                {list.map((h) => (
                  <tr
                    key={h.name}
                    data-testid={`host-row-${h.name}`}
                    className="clickable"
                    onClick={() => props.open(h.name)}
                  >
                    <td>
                      <a
                        href={`#/hosts/${encodeURIComponent(h.name)}`}
                        onClick={(e) => {
                          e.preventDefault();
                          props.open(h.name);
                        }}
                      >
                        <strong>{h.name}</strong>
                      </a>
                    </td>
                    <td>
                      {h.name === LOCAL_HOST_NAME ? (
                        <span>{t('local.address')}</span>
                      ) : (
                        <code>{`${h.username ? `${h.username}@` : ''}${h.hostname}:${h.port}`}</code>
                      )}
                      {h.jump && (
                        <span className="muted small"> {t('hosts.via', { jump: h.jump })}</span>
                      )}
                    </td>
                    <td>
                      {h.inventory ? (
                        h.inventory.chipCount ? (
                          `${h.inventory.chipCount} × ${dash(h.inventory.chip)}`
                        ) : (
                          t('hosts.noNpu')
                        )
                      ) : (
                        <span className="muted">{t('hosts.notInventoried')}</span>
                      )}
                    </td>
                    <td>
                      {/* no reading (no inventory, no NPU): a dash like the other columns */}
                      {h.inventory?.health ? (
                        <span className={`badge ${healthClass(h.inventory.health)}`}>
                          {h.inventory.health}
                        </span>
                      ) : (
                        dash(null)
                      )}
                    </td>
                    <td>{dash(h.inventory?.cann)}</td>
                    <td>{dash(h.inventory?.driver)}</td>
                    <td>{dash(h.inventory?.torchNpu)}</td>
                    <td>{dash(h.group)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
      {dialog === 'add' && (
        <AddHostDialog
          onClose={() => setDialog(null)}
          onAdded={(name) => {
            setDialog(null);
            props.open(name);
          }}
        />
      )}
      {dialog === 'import' && (
        <ImportDialog onClose={() => setDialog(null)} onAddByHand={() => setDialog('add')} />
      )}
    </section>
  );
}
