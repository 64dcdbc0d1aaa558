import { useEffect, useRef, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from './Icon';

/** A modal on the native <dialog>: focus trapping and Escape come with it. */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const { t } = useTranslation();
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const onCancel = (e: Event) => {
      e.preventDefault();
      props.onClose();
    };
    d.addEventListener('cancel', onCancel);
    return () => d.removeEventListener('cancel', onCancel);
  }, [props]);
  return (
    <dialog
      ref={ref}
      className={`dialog${props.wide ? ' wide' : ''}`}
      data-testid={props.testId}
      aria-label={props.title}
    >
      <header>
        <h2>{props.title}</h2>
        <button className="icon-button" onClick={props.onClose} aria-label={t('common.close')}>
          <Icon name="close" />
        </button>
      </header>
      {props.children}
    </dialog>
  );
}
