import { describe, expect, it } from 'vitest';
import { en } from './en';
import { zhCN } from './zh-CN';
import { explainError, jobKindKey, jobTitle, languageFromLocale, translator } from './index';
import { AmwError, ERROR_CODES, fromWireError } from '../errors';
import { msg } from '../api/text';
import { STAGE_NAMESPACES } from '../stages';

function leaves(tree: object, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out.set(key, v);
    else for (const [kk, vv] of leaves(v as object, key)) out.set(kk, vv);
  }
  return out;
}

// the app's strings and every stage's namespace, as one tree per language
const all = (lang: 'en' | 'zh-CN', own: object) => ({
  translation: own,
  ...Object.fromEntries(Object.entries(STAGE_NAMESPACES).map(([ns, d]) => [ns, d[lang]])),
});

describe('dictionaries', () => {
  const enLeaves = leaves(all('en', en));
  const zhLeaves = leaves(all('zh-CN', zhCN));

  it('zh-CN and en have exactly the same keys', () => {
    expect([...zhLeaves.keys()].sort()).toEqual([...enLeaves.keys()].sort());
  });

  it('no string is empty and zh-CN strings are really translated', () => {
    for (const [key, value] of zhLeaves) {
      // separators are whitespace or nothing by nature
      if (key.startsWith('translation.common.join.')) continue;
      expect(value.trim(), key).not.toBe('');
    }
    // Names, commands and placeholders may stay the same; prose must not.
    const untranslated = [...zhLeaves].filter(
      ([k, v]) => v === enLeaves.get(k) && /[a-z]{4,}\s+[a-z]{4,}/i.test(v),
    );
    expect(untranslated).toEqual([]);
  });

  it('placeholders match between languages', () => {
    const names = (s: string) => [...s.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
    for (const [key, value] of enLeaves) {
      expect(names(zhLeaves.get(key)!), key).toEqual(names(value));
    }
  });

  it('every error code has a message in both languages', () => {
    for (const code of ERROR_CODES) {
      expect(enLeaves.has(`translation.errors.${code}`), code).toBe(true);
    }
  });
});

describe('translator', () => {
  it('interpolates and falls back to English, then to the key', () => {
    const t = translator('zh-CN');
    expect(t('jobs.step.copyPages', { done: 3, total: 9 })).toBe('已复制 3 / 9 页');
    expect(t('no.such.key')).toBe('no.such.key');
  });

  it('zh-CN: no space is left between two Chinese characters where a Chinese value fills a slot', () => {
    const t = translator('zh-CN');
    const waiver = { check: 'env.limits', by: '张三', reason: '调度器会放开' };
    expect(t('sessions.timeline.waiver', { ...waiver, host: t('common.thisMachine') })).toBe(
      '本机上的“env.limits”已由张三豁免：调度器会放开',
    );
    // a Latin value keeps its spaces, and English is left as it is
    expect(t('sessions.timeline.waiver', { ...waiver, host: 'npu-a' })).toMatch(/^npu-a 上的“/);
    expect(
      translator('en')('sessions.timeline.waiver', { ...waiver, host: 'this machine' }),
    ).toContain('on this machine waived by');
    // a path is no word: its space before the next one stays, however its last folder is named
    expect(t('errors.text.notAFolder', { path: '/数据/模型' })).toBe('/数据/模型 不是文件夹。');
    // a title ending in a full-width bracket sits against the next Chinese word too
    expect(
      t('sessions.timeline.waiver', { ...waiver, check: '数据加载（DALI）', host: 'npu-a' }),
    ).toBe('npu-a 上的“数据加载（DALI）”已由张三豁免：调度器会放开');
    // a space inside a value is the value's own: kept
    expect(t('sessions.timeline.waiver', { ...waiver, host: '机房 一号' })).toMatch(
      /^机房 一号上的“/,
    );
  });

  it('names a stage run after its stage, in the language asked', () => {
    expect(jobTitle(translator('en', STAGE_NAMESPACES), 'stage.code')).toBe('Code stage');
    expect(jobTitle(translator('zh-CN', STAGE_NAMESPACES), 'stage.env')).toMatch(/环境/);
    // a stage this build does not know falls back to the plain kind key
    expect(jobTitle(translator('en'), 'stage.nope')).toBe('jobs.kind.stage_nope');
  });

  it('names job kinds despite the dots in them', () => {
    expect(translator('en')(jobKindKey('maintenance.backup'))).toBe('Database backup');
  });

  it('explains a wire error with its detail', () => {
    const text = explainError(translator('zh-CN'), {
      code: 'DB_TOO_NEW',
      message: 'x',
      detail: { dbPath: '/d/amw.db', dbVersion: 7, appVersion: 1 },
    });
    expect(text).toContain('/d/amw.db');
    expect(text).toContain('7');
    expect(text).toContain('1');
  });

  it('reads a lazy namespace when a key of its own is first shown, once', () => {
    let reads = 0;
    const t = translator('zh-CN', STAGE_NAMESPACES, {
      notes: () => {
        reads++;
        return {
          en: { hello: 'Hello {{name}}', only: 'English only' },
          'zh-CN': { hello: '你好 {{name}}' },
        };
      },
    });
    expect(t('stage-code:name')).not.toBe('stage-code:name');
    expect(reads).toBe(0);
    expect(t('notes:hello', { name: 'amw' })).toBe('你好 amw');
    // the English text is the fallback, as for an eager namespace
    expect(t('notes:only')).toBe('English only');
    expect(reads).toBe(1);
  });

  it('says why a lazy namespace cannot be read, at every key of it, never the bare key', () => {
    const t = translator(
      'en',
      {},
      {
        notes: () => {
          throw new Error('notes.json is not valid: rules.0.id: Required');
        },
      },
    );
    expect(() => t('notes:hello')).toThrow(/notes\.json is not valid/);
    expect(() => t('notes:hello')).toThrow(/notes\.json is not valid/);
    expect(t('jobs.kind.maintenance_backup')).toBe('Database backup');
  });

  it("explains an engine error by its own text, and a stage's refusal by its key", () => {
    const err = new AmwError('NOT_FOUND', msg('errors.text.notAFolder', { path: '/x' }));
    expect(err.message).toBe('/x is not a folder.');
    expect(explainError(translator('zh-CN'), fromWireError(err.toWire()))).toBe(
      '未找到：/x 不是文件夹。',
    );
    const refusal = new AmwError('VALIDATION', 'The ops stage needs an entry.', {
      issues: [{ path: 'entry', message: 'stage-ops:needsEntry' }],
    }).toWire();
    const zh = explainError(translator('zh-CN', STAGE_NAMESPACES), refusal);
    expect(zh).toMatch(/^输入无效：.*[\u4e00-\u9fff]/);
    expect(zh).not.toContain('needs an entry');
    // a translator without the stage's namespace keeps the English sentence, never a bare key
    expect(explainError(translator('en'), refusal)).toBe(
      'Some input is not valid: The ops stage needs an entry.',
    );
  });

  it('reads zh from locale strings', () => {
    expect(languageFromLocale('zh_CN.UTF-8')).toBe('zh-CN');
    expect(languageFromLocale('en_US.UTF-8')).toBe('en');
    expect(languageFromLocale(undefined)).toBe('en');
  });
});
