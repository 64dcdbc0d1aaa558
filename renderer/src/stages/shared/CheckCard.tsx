import { useTranslation } from 'react-i18next';
import { DOCTOR_RULES_NS, isWaived, type CheckOutcome } from '../../../../shared/api';
import { InlineCode } from '../../components/InlineCode';
import { useText } from '../../i18n';
import { StatusBadge } from './StageStatus';
import { statusClass } from './status';
import { WaiveControls, WaiverNote } from './Waiver';
import { Evidence } from './Evidence';
import { hasEvidence } from '../../../../shared/api/evidence';

/**
 * One check's outcome, the same in every stage: status, title, summary, remediation, evidence,
 * its waiver, waiving it, and (where the stage allows) rerunning it alone.
 */
export function CheckCard(props: {
  check: CheckOutcome;
  sessionId: number;
  /** The host the check ran on (waivers are per host). */
  host: string;
  /** Absent where a check cannot be rerun alone (the code stage rescans the whole tree). */
  onRerun?: () => void;
  busy: boolean;
}) {
  const { t } = useTranslation();
  const text = useText();
  const c = props.check;
  return (
    <article
      className={`check-card ${statusClass(c.status)}${isWaived(c) ? ' waived' : ''}`}
      data-testid={`check-${c.id}`}
      data-status={c.status}
    >
      <header>
        {isWaived(c) ? (
          // waived: not red any more, and still saying what it was
          <span className="badge waived" data-testid="waived-badge">
            {t('sessions.waivedStatus', { status: t(`sessions.status.${c.status}`) })}
          </span>
        ) : (
          <StatusBadge status={c.status} />
        )}
        <strong>{text(c.title)}</strong>
      </header>
      <p>
        <InlineCode text={text(c.summary)} />
      </p>
      {c.remediation && c.status !== 'pass' && (
        // prose with its commands as code, not all of it set as code
        <p className="remedy">
          <InlineCode text={text(c.remediation)} />
        </p>
      )}
      {c.diagnosis?.length ? (
        <div className="diagnosis" data-testid="diagnosis">
          <strong>{t('sessions.diagnosis')}</strong>
          <ul>
            {c.diagnosis.map((d) => (
              <li key={`${d.rule}:${d.line}`} data-rule={d.rule}>
                <b>{t(`${DOCTOR_RULES_NS}:${d.rule}.title`)}</b> —{' '}
                <InlineCode text={t(`${DOCTOR_RULES_NS}:${d.rule}.cause`)} />
                <div className="small">
                  → <InlineCode text={t(`${DOCTOR_RULES_NS}:${d.rule}.fix`)} />
                </div>
                <code className="small muted">{d.text}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <WaiverNote check={c} />
      {hasEvidence(c.evidence) && (
        <details>
          <summary>{t('sessions.evidence')}</summary>
          <Evidence value={c.evidence} />
        </details>
      )}
      <footer>
        <code className="muted small">{c.id}</code>
        <div className="spacer" />
        {props.onRerun && (
          <button
            className="small"
            onClick={props.onRerun}
            disabled={props.busy}
            data-testid="rerun-check"
          >
            {t('sessions.rerun')}
          </button>
        )}
        <WaiveControls check={c} sessionId={props.sessionId} host={props.host} />
      </footer>
    </article>
  );
}
