import { useTranslation } from 'react-i18next';
import type { DumpSide, TensorStats } from '../../../../shared/stages/precision/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';

const NS = 'stage-precision:';

const num = (x: number | null) =>
  x === null
    ? '—'
    : x === 0
      ? '0'
      : Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5
        ? x.toExponential(4)
        : x.toPrecision(6);

function Output({ o }: { o: TensorStats }) {
  return (
    <>
      <code>
        {o.dtype} [{o.shape.join('×')}]
      </code>{' '}
      {num(o.max)} / {num(o.min)} / {num(o.mean)} / {num(o.norm)}
      {(o.nan > 0 || o.inf > 0) && ` · NaN ${o.nan} · Inf ${o.inf}`}
      {o.md5 && (
        <>
          {' '}
          · <code>{o.md5}</code>
        </>
      )}
    </>
  );
}

/** One side of the drill-down: where it ran, and each of the module's records as dumped. */
function Side(props: { side: 'baseline' | 'target'; d: DumpSide | null }) {
  const { t } = useTranslation();
  const { d } = props;
  return (
    <tbody data-testid={`precision-dump-${props.side}`}>
      <tr>
        <th colSpan={3}>
          {t(`${NS}side.${props.side}`)}
          {d && (
            <span className="muted small">
              {' '}
              · {t(`${NS}ui.device`)} <code>{d.device}</code> · torch <code>{d.torch ?? '?'}</code>
              {d.torchNpu && (
                <>
                  {' '}
                  · torch_npu <code>{d.torchNpu}</code>
                </>
              )}{' '}
              · <code>{d.autocast ? `${d.autocast.device} ${d.autocast.dtype}` : d.dtype}</code>
            </span>
          )}
        </th>
      </tr>
      {d && !d.modules.length && (
        <tr>
          <td colSpan={3} className="muted">
            {t(`${NS}ui.notInDump`)}
          </td>
        </tr>
      )}
      {d?.modules.map((r) => (
        <tr key={`${r.kind ?? 'forward'}-${r.order}`}>
          <td>
            {r.order} · <code>{r.module || '(model)'}</code>
            {r.call > 0 && ` #${r.call + 1}`} <code className="small">{r.kind ?? 'forward'}</code>
          </td>
          <td>
            <code className="small">{r.callSite ?? r.classSource ?? ''}</code>
          </td>
          <td>
            {r.outputs.map((o, i) => (
              <div key={i}>
                <Output o={o} />
              </div>
            ))}
          </td>
        </tr>
      ))}
    </tbody>
  );
}

/**
 * A module's statistics on both sides, straight from the stored raw dumps (every call, every
 * output, with where each side ran) — the numbers the comparison row was computed from.
 */
export function DumpDrill(props: { runId: number; module: string }) {
  const { t } = useTranslation();
  const r = useCall('precision.dumps', { stageRunId: props.runId, module: props.module });
  if (r.error) return <ErrorText error={r.error} />;
  if (!r.data) return <p className="muted">{t('common.loading')}</p>;
  const { baseline, target } = r.data;
  if (!baseline && !target)
    return (
      <p className="muted" data-testid="precision-dump-none">
        {t(`${NS}ui.noDump`)}
      </p>
    );
  return (
    <table className="table small" data-testid="precision-dump">
      <caption>
        {t(`${NS}ui.drill`)}
        {t('common.paren', { text: t(`${NS}ui.stats`) })}
      </caption>
      <thead>
        <tr>
          <th>{t(`${NS}ui.calls`)}</th>
          <th>{t(`${NS}report.source`)}</th>
          <th>{t(`${NS}ui.outputs`)}</th>
        </tr>
      </thead>
      <Side side="baseline" d={baseline} />
      <Side side="target" d={target} />
    </table>
  );
}
