import { useTranslation } from 'react-i18next';
import type { Page } from '../routes';

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
