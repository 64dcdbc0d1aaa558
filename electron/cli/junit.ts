import type { CheckOutcome, Language } from '../../shared/api';

const esc = (s: string) =>
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
  const count = (s: string) => checks.filter((c) => c.status === s && !c.waiver).length;
  const cases = checks.map((c) => {
    const name = `${c.id}: ${c.title[lang]}`;
    const body = `${c.summary[lang]}${c.remediation ? `\n\n${c.remediation[lang]}` : ''}`;
    const waived = c.waiver ? ` (waived by ${c.waiver.by}: ${c.waiver.reason})` : '';
    let inner = '';
    if (c.waiver && (c.status === 'fail' || c.status === 'error'))
      inner = `<skipped message="${esc(`waived by ${c.waiver.by}: ${c.waiver.reason}`)}"/>`;
    else if (c.status === 'fail')
      inner = `<failure message="${esc(c.summary[lang])}">${esc(body)}</failure>`;
    else if (c.status === 'error')
      inner = `<error message="${esc(c.summary[lang])}">${esc(body)}</error>`;
    else if (c.status === 'skip') inner = `<skipped message="${esc(c.summary[lang])}"/>`;
    else inner = `<system-out>${esc(`${c.status}: ${c.summary[lang]}${waived}`)}</system-out>`;
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
