import { useTranslation } from 'react-i18next';
import { explainError } from '../../../shared/i18n';
import { toWireError } from '../../../shared/errors';

/**
 * The one way the app shows an error: an engine error (a thrown one, a failed job's, a refused
 * request's) in the user's language, with its stable code for searching and support.
 */
export function ErrorText(props: { error: unknown; small?: boolean }) {
  const { t } = useTranslation();
  const wire = toWireError(props.error);
  return (
    <p className={props.small ? 'error small' : 'error'} role="alert" data-testid="error">
      <code>{wire.code}</code> {explainError((k, p) => t(k, p ?? {}), wire)}
    </p>
  );
}
