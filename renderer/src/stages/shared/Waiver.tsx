import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { isWaivable, type CheckOutcome } from '../../../../shared/api';
import { titleWithId, type Translate } from '../../../../shared/i18n';
import { useAction } from '../../api';
import { Dialog } from '../../components/Dialog';
import { ErrorText } from '../../components/ErrorText';
import { InlineCode } from '../../components/InlineCode';
import { useText } from '../../i18n';

const WAIVER_NAME_KEY = 'amw.waiverName';

/** Who waived a check and why, where the check is shown. */
export function WaiverNote({ check }: { check: CheckOutcome }) {
  const { t } = useTranslation();
  if (!check.waiver) return null;
  return (
    <p className="waiver" data-testid="waiver">
      {t('sessions.waivedBy', { by: check.waiver.by, reason: check.waiver.reason })}
    </p>
  );
}

/**
 * Waive (with a reason and a name) or take the waiver back: the same in every stage, for a check
 * that failed, warned or errored. `host` is where it ran, as its run names it.
 */
export function WaiveControls(props: { check: CheckOutcome; sessionId: number; host: string }) {
  const { t } = useTranslation();
  const c = props.check;
  const [waiving, setWaiving] = useState(false);
  const unwaive = useAction('checks.unwaive', ['sessions.get', 'sessions.list']);
  return (
    <>
      {unwaive.error && <ErrorText error={unwaive.error} />}
      {isWaivable(c.status) && !c.waiver && (
        <button className="small" onClick={() => setWaiving(true)} data-testid="waive">
          {t('sessions.waive')}
        </button>
      )}
      {c.waiver && (
        <button
          className="small"
          disabled={unwaive.isPending}
          onClick={() =>
            unwaive.mutate({
              sessionId: props.sessionId,
              checkId: c.id,
              host: props.host,
              // the name this browser last signed a waiver with, for the timeline
              ...(localStorage.getItem(WAIVER_NAME_KEY)
                ? { by: localStorage.getItem(WAIVER_NAME_KEY)! }
                : {}),
            })
          }
          data-testid="unwaive"
        >
          {t('sessions.unwaive')}
        </button>
      )}
      {waiving && (
        <WaiveDialog
          sessionId={props.sessionId}
          host={props.host}
          check={c}
          onClose={() => setWaiving(false)}
        />
      )}
    </>
  );
}

function WaiveDialog(props: {
  sessionId: number;
  host: string;
  check: CheckOutcome;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const text = useText();
  const waive = useAction('checks.waive', ['sessions.get', 'sessions.list']);
  const [reason, setReason] = useState('');
  const [by, setBy] = useState(() => localStorage.getItem(WAIVER_NAME_KEY) ?? '');
  // what still keeps Waive off, said under the fields and as the button's tooltip
  const missing =
    reason.trim().length < 3
      ? t('sessions.waiveReasonShort')
      : !by.trim()
        ? t('sessions.waiveNeedsName')
        : null;
  const ok = !missing;
  return (
    <Dialog
      // named as its card names it; the id after, as the card's footer shows it
      title={t('sessions.waiveTitle', {
        check: titleWithId(t as Translate, text(props.check.title), props.check.id),
      })}
      onClose={props.onClose}
      testId="waive-dialog"
    >
      <p className="muted">
        <InlineCode text={text(props.check.summary)} />
      </p>
      <label className="field stacked">
        <span>{t('sessions.waiveReason')}</span>
        <textarea
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          data-testid="waive-reason"
        />
      </label>
      <label className="field stacked">
        <span>{t('sessions.waiveBy')}</span>
        <input value={by} onChange={(e) => setBy(e.target.value)} data-testid="waive-by" />
      </label>
      {waive.error && <ErrorText error={waive.error} />}
      {missing && (reason || by) && (
        <p className="muted small" data-testid="waive-missing">
          {missing}
        </p>
      )}
      <div className="row end">
        <button onClick={props.onClose}>{t('common.cancel')}</button>
        <button
          className="primary"
          title={missing ?? undefined}
          disabled={!ok || waive.isPending}
          data-testid="waive-save"
          onClick={() => {
            localStorage.setItem(WAIVER_NAME_KEY, by.trim());
            waive.mutate(
              {
                sessionId: props.sessionId,
                checkId: props.check.id,
                host: props.host,
                reason: reason.trim(),
                by: by.trim(),
              },
              { onSuccess: props.onClose },
            );
          }}
        >
          {t('sessions.waive')}
        </button>
      </div>
    </Dialog>
  );
}
