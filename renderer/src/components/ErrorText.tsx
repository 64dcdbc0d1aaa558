import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { DOCTOR_RULES_NS, type Language } from '../../../shared/api';
import { explainError } from '../../../shared/i18n';
import { toWireError } from '../../../shared/errors';

/** What the engine's error doctor recognised in a failure (rule ids; texts are knowledge). */
function diagnosisOf(detail: unknown): { rule: string; text: string }[] {
  const d = (detail as { diagnosis?: unknown } | undefined)?.diagnosis;
  return Array.isArray(d)
    ? d.filter(
        (x): x is { rule: string; text: string } =>
          typeof x?.rule === 'string' && typeof x?.text === 'string',
      )
    : [];
}

/** An engine error explained in the chosen UI language (its own text, else its code's words). */
export function useExplainError(): (error: {
  code: string;
  message: string;
  detail?: unknown;
  text?: unknown;
}) => string {
  const { t, i18n } = useTranslation();
  return useCallback(
    (error) => explainError((k, p) => t(k, p ?? {}), error, i18n.language as Language),
    [t, i18n.language],
  );
}

/**
 * An error's explanation, its stable code kept for search and support as a tooltip and an
 * attribute, not as a raw word in front of the sentence.
 */
export function ErrorLine(props: {
  error: { code: string; message: string; detail?: unknown; text?: unknown };
}) {
  const { t } = useTranslation();
  const explain = useExplainError();
  return (
    <span
      data-code={props.error.code}
      title={t('errors.supportCode', { code: props.error.code })}
      data-testid="error-text"
    >
      {explain(props.error)}
    </span>
  );
}

/**
 * The one way the app shows an error: an engine error (a thrown one, a failed job's, a refused
 * request's) in the user's language, with its stable code (a tooltip) for searching and support, and the
 * error doctor's cause and fix where it recognised the failure.
 */
export function ErrorText(props: { error: unknown; small?: boolean }) {
  const { t } = useTranslation();
  const wire = toWireError(props.error);
  const diagnosis = diagnosisOf(wire.detail);
  const cls = props.small ? 'error small' : 'error';
  const line = <ErrorLine error={wire} />;
  if (!diagnosis.length)
    return (
      <p className={cls} role="alert" data-testid="error">
        {line}
      </p>
    );
  return (
    <div className={cls} role="alert" data-testid="error">
      <p>{line}</p>
      <ul className="diagnosis" data-testid="error-diagnosis">
        {diagnosis.map((d, i) => (
          <li key={`${d.rule}:${i}`} data-rule={d.rule}>
            <b>{t(`${DOCTOR_RULES_NS}:${d.rule}.title`)}</b> —{' '}
            {t(`${DOCTOR_RULES_NS}:${d.rule}.cause`)}
            <div className="small">→ {t(`${DOCTOR_RULES_NS}:${d.rule}.fix`)}</div>
          </li>
        ))}
      </ul>
    </div>
  );
}
