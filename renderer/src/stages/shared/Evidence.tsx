import { useTranslation } from 'react-i18next';
import { evidenceView, type EvidenceView } from '../../../../shared/api/evidence';

/** A check's evidence as fields, lists and tables (was raw JSON), the same in every stage. */
export function Evidence(props: { value: unknown }) {
  return (
    // stored values and keys as the stage wrote them (`warning`, `npu`): data in no language
    // (zxx), as code is, not words to translate
    <div className="evidence" data-testid="evidence" lang="zxx">
      <View v={evidenceView(props.value)} />
    </div>
  );
}

function More(props: { count: number }) {
  const { t, i18n } = useTranslation();
  // words of the UI inside the data block: in the UI's language
  return props.count ? (
    <span className="muted" lang={i18n.language}>
      {' '}
      {t('common.more', { count: props.count })}
    </span>
  ) : null;
}

function View({ v }: { v: EvidenceView }) {
  const { t } = useTranslation();
  switch (v.kind) {
    case 'text':
      return <span className="ev-text">{v.text}</span>;
    case 'list':
      return (
        <span className="ev-list">
          {v.items.map((x, i) => (
            <code key={i}>{x}</code>
          ))}
          <More count={v.more} />
        </span>
      );
    case 'table':
      return (
        <>
          <table className="ev-table">
            <thead>
              <tr>
                {v.columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
                {v.moreColumns > 0 && (
                  <th className="muted">{t('common.more', { count: v.moreColumns })}</th>
                )}
              </tr>
            </thead>
            <tbody>
              {v.rows.map((r, i) => (
                <tr key={i}>
                  {r.map((x, j) => (
                    <td key={j}>{x}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <More count={v.more} />
        </>
      );
    case 'fields':
      return (
        <dl className="ev-fields">
          {v.fields.map(([k, x]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>
                <View v={x} />
              </dd>
            </div>
          ))}
          <More count={v.more} />
        </dl>
      );
  }
}
