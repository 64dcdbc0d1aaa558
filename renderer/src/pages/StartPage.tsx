import { useTranslation } from 'react-i18next';
import type { Page } from '../routes';
import { PageHead } from '../components/PageHead';

type StartPageName = Exclude<Page, 'settings'>;

const CLI: Partial<Record<StartPageName, string[]>> = {
  hosts: [
    'amw hosts import-ssh-config',
    'amw hosts add NAME --host H --user U',
    'amw inventory NAME',
  ],
  sessions: ['amw run HOST --stage env --project P'],
  code: ['amw scan PATH --json', 'amw scan PATH --fix --out DIR'],
  reports: ['amw report SESSION_ID --format html --out report.html'],
};

/** What a capability will do, how to start, and (once it exists) the CLI equivalent. */
export function StartSteps(props: { page: StartPageName; cli?: boolean }) {
  const { t } = useTranslation();
  const base = `pages.${props.page}`;
  return (
    <>
      <h2>{t('common.howToStart')}</h2>
      <ol className="steps">
        {[1, 2, 3].map((n) => (
          <li key={n}>
            <span className="step-n">{n}</span>
            <span>{t(`${base}.step${n}`)}</span>
          </li>
        ))}
      </ol>
      {props.cli !== false && CLI[props.page] && (
        <>
          <h2>{t('common.cli')}</h2>
          <pre className="cli">{CLI[props.page]!.join('\n')}</pre>
        </>
      )}
    </>
  );
}

/**
 * The first screen of a capability that is not in this build yet: it says so plainly instead of
 * showing controls that do nothing.
 */
export function StartPage(props: { page: StartPageName }) {
  const { t } = useTranslation();
  return (
    <section className="page" data-testid={`page-${props.page}`}>
      <PageHead icon={props.page} title={t(`pages.${props.page}.title`)}>
        <span className="badge muted">{t('common.notYet')}</span>
      </PageHead>
      <div className="empty">
        <p className="lead">{t(`pages.${props.page}.lead`)}</p>
        {/* the code scan already works from the CLI; its diff review UI is what is not built yet */}
        <StartSteps page={props.page} cli={props.page === 'code'} />
      </div>
    </section>
  );
}
