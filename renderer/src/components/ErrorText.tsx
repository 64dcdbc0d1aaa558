import { useTranslation } from 'react-i18next';
import { explainError } from '../../../shared/i18n';
import { toWireError } from '../../../shared/errors';

/** An engine error in the user's language, with its stable code for searching and support. */
export function ErrorText(props: { error: unknown }) {
  const { t } = useTranslation();
  const wire = toWireError(props.error);
  return (
    <p className="error" role="alert" data-testid="error">
      <code>{wire.code}</code> {explainError((k, p) => t(k, p ?? {}), wire)}
    </p>
  );
}
