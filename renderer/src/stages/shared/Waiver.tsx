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
  const [unwaiving, setUnwaiving] = useState(false);
  return (
    <>
      {isWaivable(c.status) && !c.waiver && (
        <button className="small" onClick={() => setWaiving(true)} data-testid="waive">
          {t('sessions.waive')}
        </button>
      )}
      {c.waiver && (
        <button className="small" onClick={() => setUnwaiving(true)} data-testid="unwaive">
          {t('sessions.unwaive')}
        </button>
      )}
      {unwaiving && c.waiver && (
        <UnwaiveDialog
          sessionId={props.sessionId}
          host={props.host}
          check={c}
          onClose={() => setUnwaiving(false)}
        />
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

/** What the waive and take-back dialogs are about: a check, where it ran, in which session. */
interface CheckDialogProps {
  sessionId: number;
  host: string;
  check: CheckOutcome;
  onClose: () => void;
}

/** The name a waiver, or its taking back, is signed with: the one this browser last used. */
function useSigner() {
  const [by, setBy] = useState(() => localStorage.getItem(WAIVER_NAME_KEY) ?? '');
  return { by, setBy, remember: () => localStorage.setItem(WAIVER_NAME_KEY, by.trim()) };
}

function SignerField(props: { value: string; onChange: (v: string) => void; testId: string }) {
  const { t } = useTranslation();
  return (
    <label className="field stacked">
      <span>{t('sessions.waiveBy')}</span>
      <input
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={props.testId}
      />
    </label>
  );
}

/**
 * Taking a waiver back names who does it (the timeline says so): asked here, as the waiver asked
 * for its name, the name this browser last signed with filled in — never taken unseen.
 */
function UnwaiveDialog(props: CheckDialogProps) {
  const { t } = useTranslation();
  const text = useText();
  const unwaive = useAction('checks.unwaive', ['sessions.get', 'sessions.list', 'reports.build']);
  const { by, setBy, remember } = useSigner();
  const missing = by.trim() ? null : t('sessions.unwaiveNeedsName');
  return (
    <Dialog
      title={t('sessions.unwaiveTitle', {
        check: titleWithId(t as Translate, text(props.check.title), props.check.id),
      })}
      onClose={props.onClose}
      testId="unwaive-dialog"
    >
      <WaiverNote check={props.check} />
      <SignerField value={by} onChange={setBy} testId="unwaive-by" />
      {unwaive.error && <ErrorText error={unwaive.error} />}
      {missing && (
        <p className="muted small" data-testid="unwaive-missing">
          {missing}
        </p>
      )}
      <div className="row end">
        <button onClick={props.onClose}>{t('common.cancel')}</button>
        <button
          className="primary"
          title={missing ?? undefined}
          disabled={!!missing || unwaive.isPending}
          data-testid="unwaive-save"
          onClick={() => {
            remember();
            unwaive.mutate(
              {
                sessionId: props.sessionId,
                checkId: props.check.id,
                host: props.host,
                by: by.trim(),
              },
              { onSuccess: props.onClose },
            );
          }}
        >
          {t('sessions.unwaiveConfirm')}
        </button>
      </div>
    </Dialog>
  );
}

function WaiveDialog(props: CheckDialogProps) {
  const { t } = useTranslation();
  const text = useText();
  const waive = useAction('checks.waive', ['sessions.get', 'sessions.list', 'reports.build']);
  const [reason, setReason] = useState('');
  const { by, setBy, remember } = useSigner();
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
      <SignerField value={by} onChange={setBy} testId="waive-by" />
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
            remember();
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
