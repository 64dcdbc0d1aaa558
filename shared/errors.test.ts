import { describe, expect, it } from 'vitest';
import { isMsg, msg } from './api/text';
import { AmwError, errorParam, fromWireError, toWireError } from './errors';
import { renderText, translator } from './i18n';

describe('engine errors carry their text', () => {
  it('across the wire, with the English message kept for logs', () => {
    const err = new AmwError('NOT_FOUND', msg('errors.text.noSession', { id: 7 }), { id: 7 });
    expect(err.message).toBe('No session 7.');
    const back = fromWireError(JSON.parse(JSON.stringify(toWireError(err))) as never);
    expect(back.text).toEqual({ key: 'errors.text.noSession', params: { id: 7 } });
    expect(back.message).toBe('No session 7.');
  });

  it('an English message reads a nested message, a plural and a key it does not know', () => {
    expect(
      new AmwError(
        'NOT_FOUND',
        msg('errors.text.noProfileOf', { id: 3, status: msg('sessions.status.error') }),
      ).message,
    ).toBe(
      'Stage run 3 ended as “error” and stored no profile: there is nothing to show or compare.',
    );
    expect(new AmwError('INTERNAL', msg('stage-x:nope', { a: 1 })).message).toBe(
      'stage-x:nope {"a":"1"}',
    );
  });

  it('as a parameter of a stored sentence: its own words, host output bounded', () => {
    const long = 'x'.repeat(1000);
    const p = errorParam(
      new AmwError('PROBE_FAILED', msg('errors.text.opsNoResult', { output: long })),
    );
    if (!isMsg(p)) throw new Error('the error’s own words were lost');
    expect(renderText(translator('zh-CN'), 'zh-CN', p)).toMatch(
      /^算子采集没有输出结果。最后的输出：x{300}$/,
    );
    expect(errorParam(new Error(long))).toBe('x'.repeat(300));
  });
});
