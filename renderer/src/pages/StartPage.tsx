import { useTranslation } from 'react-i18next';
import type { Page } from '../routes';
import { Icon } from '../components/Icon';

const CLI: Partial<Record<Page, string[]>> = {
  hosts: [
    'amw hosts import-ssh-config',
    'amw hosts add NAME --host H --user U',
    'amw inventory NAME',
  ],
  sessions: ['amw run HOST --stage env --project P'],
  code: ['amw scan PATH --json', 'amw scan PATH --fix --out DIR'],
  reports: ['amw report SESSION_ID --format html --out report.html'],
};

/**
 * The first screen of a capability: what it will do and how to start. Capabilities that are not
 * in this build yet say so plainly instead of showing controls that do nothing.
 */
export function StartPage(props: { page: Exclude<Page, 'settings'>; available: boolean }) {
  const { t } = useTranslation();
  const base = `pages.${props.page}`;
  return (
    <section className="page" data-testid={`page-${props.page}`}>
      <header className="page-head">
        <span className="page-icon">
          <Icon name={props.page} size={22} />
        </span>
        <h1>{t(`${base}.title`)}</h1>
        {!props.available && <span className="badge muted">{t('common.notYet')}</span>}
      </header>
      <div className="empty">
        <p className="lead">{t(`${base}.lead`)}</p>
        <h2>{t('common.howToStart')}</h2>
        <ol className="steps">
          {[1, 2, 3].map((n) => (
            <li key={n}>
              <span className="step-n">{n}</span>
              <span>{t(`${base}.step${n}`)}</span>
            </li>
          ))}
        </ol>
        {props.available && CLI[props.page] && (
          <>
            <h2>{t('common.cli')}</h2>
            <pre className="cli">{CLI[props.page]!.join('\n')}</pre>
          </>
        )}
      </div>
    </section>
  );
}
