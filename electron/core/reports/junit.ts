import type { CheckOutcome, Language, Report } from '../../../shared/api';
import { isWaived } from '../../../shared/api/stages';
import { textIn } from '../i18n';

export const esc = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    // XML 1.0 cannot carry most control characters at all
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

/** JUnit XML for CI: one test case per check; fail → <failure>, error → <error>, skip → <skipped>. */
export function junitXml(suite: string, checks: CheckOutcome[], lang: Language): string {
  const count = (s: string) => checks.filter((c) => c.status === s && !isWaived(c)).length;
  const show = textIn(lang);
  const cases = checks.map((c) => {
    const name = `${c.id}: ${show(c.title)}`;
    const summary = show(c.summary);
    const body = `${summary}${c.remediation ? `\n\n${show(c.remediation)}` : ''}`;
    const waived = c.waiver ? ` (waived by ${c.waiver.by}: ${c.waiver.reason})` : '';
    let inner = '';
    if (c.waiver && (c.status === 'fail' || c.status === 'error'))
      inner = `<skipped message="${esc(`waived by ${c.waiver.by}: ${c.waiver.reason}`)}"/>`;
    else if (c.status === 'fail')
      inner = `<failure message="${esc(summary)}">${esc(body)}</failure>`;
    else if (c.status === 'error') inner = `<error message="${esc(summary)}">${esc(body)}</error>`;
    else if (c.status === 'skip') inner = `<skipped message="${esc(summary)}"/>`;
    else inner = `<system-out>${esc(`${c.status}: ${summary}${waived}`)}</system-out>`;
    return `    <testcase classname="${esc(suite)}" name="${esc(name)}">${inner}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites tests="${checks.length}" failures="${count('fail')}" errors="${count('error')}" skipped="${count('skip')}">`,
    `  <testsuite name="${esc(suite)}" tests="${checks.length}" failures="${count('fail')}" errors="${count('error')}" skipped="${count('skip')}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** A report as JUnit XML: one suite per stage run (stage@host), one test case per check. */
export function junitFromReport(r: Report): string {
  const suites = r.stages.map((st) => {
    const name = `amw.${st.stage}.${st.host}`;
    const n = (s: string) => st.checks.filter((c) => c.status === s && !isWaived(c)).length;
    const cases = st.checks.map((c) => {
      const body = `${c.summary}${c.remediation ? `\n\n${c.remediation}` : ''}`;
      let inner: string;
      if (c.waiver && (c.status === 'fail' || c.status === 'error'))
        inner = `<skipped message="${esc(`waived by ${c.waiver.by}: ${c.waiver.reason}`)}"/>`;
      else if (c.status === 'fail')
        inner = `<failure message="${esc(c.summary)}">${esc(body)}</failure>`;
      else if (c.status === 'error')
        inner = `<error message="${esc(c.summary)}">${esc(body)}</error>`;
      else if (c.status === 'skip') inner = `<skipped message="${esc(c.summary)}"/>`;
      else inner = `<system-out>${esc(`${c.status}: ${c.summary}`)}</system-out>`;
      return `    <testcase classname="${esc(name)}" name="${esc(`${c.id}: ${c.title}`)}">${inner}</testcase>`;
    });
    return [
      `  <testsuite name="${esc(name)}" tests="${st.checks.length}" failures="${n('fail')}" errors="${n('error')}" skipped="${n('skip')}">`,
      ...cases,
      '  </testsuite>',
    ].join('\n');
  });
  const all = r.stages.flatMap((s) => s.checks);
  const n = (s: string) => all.filter((c) => c.status === s && !isWaived(c)).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${esc(`amw session ${r.session.id}: ${r.session.title}`)}" tests="${all.length}" failures="${n('fail')}" errors="${n('error')}" skipped="${n('skip')}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
