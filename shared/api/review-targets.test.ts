import { describe, expect, it } from 'vitest';
import { translator } from '../i18n';
import { LOCAL_HOST_NAME, LOCAL_TARGET } from './hosts';
import { checkTarget, findingTarget, hostWord, reviewTargetText } from './review-targets';

const stages = [
  {
    stage: 'env',
    host: 'npu-lab',
    status: 'fail' as const,
    startedAt: '2026-12-06T10:00:00Z',
    finishedAt: null,
    checks: [
      {
        id: 'env.set-env',
        title: 'CANN environment sourced',
        status: 'fail' as const,
        summary: '',
        remediation: null,
        evidence: null,
        waiver: null,
      },
    ],
  },
];

describe('review targets in words', () => {
  it('this machine is named in the language, whichever way a run on it was stored', () => {
    for (const [lang, word] of [
      ['en', 'this machine'],
      ['zh-CN', '本机'],
    ] as const) {
      const t = translator(lang);
      expect(hostWord(t, LOCAL_TARGET)).toBe(word);
      expect(hostWord(t, LOCAL_HOST_NAME)).toBe(word);
      expect(hostWord(t, 'npu-lab')).toBe('npu-lab');
    }
  });

  it('a check by its title and host, a finding by its place, an unknown id as stored', () => {
    const t = translator('en');
    expect(reviewTargetText(t, { stages }, checkTarget('env.set-env', 'npu-lab'))).toBe(
      'CANN environment sourced — npu-lab',
    );
    // a rule this translator has no text for: its id
    expect(reviewTargetText(t, { stages }, findingTarget('dist.nccl', 'a/train.py', 12))).toBe(
      'a/train.py:12 · dist.nccl',
    );
    expect(reviewTargetText(t, { stages }, 'session')).toBe('The whole session');
    // a check the report no longer has: its id, with the host in words
    expect(reviewTargetText(t, { stages }, checkTarget('env.gone', LOCAL_TARGET))).toBe(
      'env.gone — this machine',
    );
    expect(reviewTargetText(t, { stages }, 'other:thing')).toBe('other:thing');
  });

  it('a finding by its place and its rule title in the language shown, not the rule id', () => {
    const rules = {
      rules: {
        en: { dist: { nccl: { title: 'NCCL backend' } } },
        'zh-CN': { dist: { nccl: { title: 'NCCL 后端' } } },
      },
    };
    const target = findingTarget('dist.nccl', 'a/train.py', 12);
    expect(reviewTargetText(translator('en', rules), { stages }, target)).toBe(
      'a/train.py:12 · NCCL backend',
    );
    expect(reviewTargetText(translator('zh-CN', rules), { stages }, target)).toBe(
      'a/train.py:12 · NCCL 后端',
    );
  });
});
