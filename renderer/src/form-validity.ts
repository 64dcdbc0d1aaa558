import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * The browser words its own refusals of a form field ("Please fill out this field.") in the
 * browser's language, not the one chosen in the app: an empty required field and a value that
 * does not match its pattern are refused in the app's language instead, for every form at once.
 * A field's `title` (what the format is) follows the pattern message, as the browser does.
 */
export function useLocalisedValidity(): void {
  const { t } = useTranslation();
  useEffect(() => {
    const field = (e: Event) =>
      e.target instanceof HTMLInputElement ||
      e.target instanceof HTMLSelectElement ||
      e.target instanceof HTMLTextAreaElement
        ? e.target
        : null;
    const onInvalid = (e: Event) => {
      const el = field(e);
      if (!el) return;
      if (el.validity.valueMissing) el.setCustomValidity(t('common.fieldRequired'));
      else if (el.validity.patternMismatch)
        el.setCustomValidity(
          [t('common.fieldFormat'), el.title].filter(Boolean).join(t('common.join.sentences')),
        );
    };
    // the refusal is re-judged from the new value at each edit
    const onEdit = (e: Event) => field(e)?.setCustomValidity('');
    document.addEventListener('invalid', onInvalid, true);
    document.addEventListener('input', onEdit, true);
    document.addEventListener('change', onEdit, true);
    return () => {
      document.removeEventListener('invalid', onInvalid, true);
      document.removeEventListener('input', onEdit, true);
      document.removeEventListener('change', onEdit, true);
    };
  }, [t]);
}
