import { useTranslation } from 'react-i18next';
import type { InventorySummary } from '../../../../shared/api';
import { useAction, useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { dash, healthClass } from './format';

const COLUMNS: { key: keyof InventorySummary; label: string }[] = [
  { key: 'chip', label: 'hosts.col.chip' },
  { key: 'chipCount', label: 'hosts.col.count' },
  { key: 'health', label: 'hosts.col.health' },
  { key: 'cann', label: 'CANN' },
  { key: 'driver', label: 'hosts.col.driver' },
  { key: 'firmware', label: 'hosts.col.firmware' },
  { key: 'python', label: 'Python' },
  { key: 'torch', label: 'torch' },
  { key: 'torchNpu', label: 'torch_npu' },
];

/** Latest inventory of every host, one row each; a cell where a host differs from its group is marked. */
export function FleetTable(props: { open: (name: string) => void }) {
  const { t } = useTranslation();
  const table = useCall('fleet.table', {});
  const run = useAction('fleet.inventory', ['jobs.list']);
  const rows = table.data ?? [];
  const flagged = rows.filter((r) => r.differs.length).length;
  return (
    <div data-testid="fleet">
      <div className="row">
        <p className="muted">{t('hosts.fleet.lead', { count: rows.length, flagged })}</p>
        <div className="spacer" />
        <button
          onClick={() => run.mutate({})}
          data-testid="fleet-inventory"
          disabled={run.isPending}
        >
          {t('hosts.fleet.inventoryAll')}
        </button>
      </div>
      {(table.error ?? run.error) && <ErrorText error={table.error ?? run.error} />}
      {rows.length === 0 && <p className="muted">{t('hosts.fleet.empty')}</p>}
      {rows.length > 0 && (
        <table className="table fleet" data-testid="fleet-table">
          <thead>
            <tr>
              <th>{t('hosts.col.name')}</th>
              <th>{t('hosts.col.group')}</th>
              {COLUMNS.map((c) => (
                <th key={c.key}>{c.label.includes('.') ? t(c.label) : c.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ host, differs }) => (
              <tr key={host.name} data-testid={`fleet-row-${host.name}`}>
                <td>
                  <a
                    href={`#/hosts/${encodeURIComponent(host.name)}`}
                    onClick={(e) => {
                      e.preventDefault();
                      props.open(host.name);
                    }}
                  >
                    {host.name}
                  </a>
                </td>
                <td>{dash(host.group)}</td>
                {COLUMNS.map((c) => {
                  const value = host.inventory?.[c.key];
                  const odd = differs.includes(c.key);
                  return (
                    <td
                      key={c.key}
                      className={odd ? 'differs' : undefined}
                      data-differs={odd || undefined}
                      data-testid={`fleet-${host.name}-${c.key}`}
                      title={odd ? t('hosts.fleet.differs') : undefined}
                    >
                      {c.key === 'health' && value ? (
                        <span className={`badge ${healthClass(String(value))}`}>
                          {String(value)}
                        </span>
                      ) : (
                        dash(value)
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
