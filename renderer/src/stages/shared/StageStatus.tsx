import { useTranslation } from 'react-i18next';
import type { CheckStatus, StageStatus } from '../../../../shared/api';
import { statusClass } from './status';

/** A stage's or a check's status as a badge, in the language shown. */
export function StatusBadge(props: { status: StageStatus | CheckStatus; testId?: string }) {
  const { t } = useTranslation();
  return (
    <span className={`badge ${statusClass(props.status)}`} data-testid={props.testId}>
      {t(`sessions.status.${props.status}`)}
    </span>
  );
}

/** The status of a stage run (nothing when it has not run). */
export function StageStatusBadge(props: { status: StageStatus | null | undefined }) {
  return props.status ? <StatusBadge status={props.status} testId="stage-status" /> : null;
}
