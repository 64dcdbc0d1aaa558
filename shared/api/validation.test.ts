import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { explainIssue, translator } from '../i18n';
import { HostInput } from './hosts';
import { FORMATS, fieldIssues } from './validation';

const refused = (input: unknown) => {
  const r = HostInput.safeParse(input);
  if (r.success) throw new Error('accepted');
  return fieldIssues(r.error, input);
};

describe('a refused field says what it may hold', () => {
  it('a host name with a space names the characters allowed, in either language', () => {
    const [issue] = refused({ name: 'npu lab', hostname: '10.0.0.5' });
    expect(issue).toMatchObject({ field: 'name', rule: 'formatHostName' });
    expect(explainIssue(translator('en'), issue!)).toBe(
      'Name: may hold only letters, digits, dots, dashes and underscores, and must start with a letter or digit.',
    );
    expect(explainIssue(translator('zh-CN'), issue!)).toMatch(
      /^名称.*字母、数字、点、短横线和下划线/,
    );
  });

  it('an address and a login name each say theirs', () => {
    const issues = refused({ name: 'npu-a', hostname: 'host;rm', username: 'a b' });
    expect(issues.map((i) => [i.field, i.rule])).toEqual([
      ['hostname', 'formatAddress'],
      ['username', 'formatLogin'],
    ]);
  });

  it('every pattern rule has words in both languages; a pattern without one stays generic', () => {
    for (const lang of ['en', 'zh-CN'] as const) {
      const t = translator(lang);
      for (const rule of Object.keys(FORMATS)) {
        const text = t(`validation.rule.${rule}`);
        expect(text, `${lang} ${rule}`).not.toBe(`validation.rule.${rule}`);
        expect(text, `${lang} ${rule}`).not.toBe(t('validation.rule.format'));
      }
    }
    // each pattern's words are its own: two alike would name one rule for both
    expect(new Set(Object.values(FORMATS)).size).toBe(Object.keys(FORMATS).length);
    const r = z.object({ x: z.string().regex(/^a$/, 'something else') }).safeParse({ x: 'b' });
    expect(fieldIssues(r.error!, { x: 'b' })[0]!.rule).toBe('format');
  });
});
