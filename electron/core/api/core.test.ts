import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Settings } from '../../../shared/api';
import { tempDir } from '../../../tests/support/temp';
import { createCore } from './core';
import { explainError, translator } from '../../../shared/i18n';
import { AmwError, errorText, toWireError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { classifyConnectError } from '../ssh/connect';

function core() {
  const dir = tempDir();
  return createCore({ env: { AMW_HOME: dir } as NodeJS.ProcessEnv });
}

describe('dispatch through the contract', () => {
  it('rejects invalid input with VALIDATION naming the field, before any handler runs', async () => {
    const c = core();
    const res = await c.dispatch('settings.set', { language: 'fr' }, { transport: 'test' });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.error.code).toBe('VALIDATION');
    expect(res.error.detail).toMatchObject({ issues: [{ path: 'language' }] });
    expect((await c.call('settings.get', {})).language).toBe('en');
    await c.close();
  });

  it('says what is wrong with each field once, in the chosen language', async () => {
    const c = core();
    const res = await c.dispatch(
      'hosts.add',
      { name: '', hostname: 'h', port: Number('abc') },
      { transport: 'test' },
    );
    await c.close();
    if (res.ok) throw new Error('accepted');
    expect(explainError(translator('en'), res.error)).toBe(
      'Some input is not valid: Name: is required. Port: must be a number.',
    );
    const zh = explainError(translator('zh-CN'), res.error);
    expect(zh).toBe('输入无效：名称：为必填项。端口：必须是数字。');
    const project = await core().dispatch(
      'projects.create',
      { name: 'p', baseline: { stepTimeMs: Number('abc') }, targetHosts: [] },
      { transport: 'test' },
    );
    if (project.ok) throw new Error('accepted');
    expect(explainError(translator('en'), project.error)).toMatch(
      /Step time \(ms\): must be a number/,
    );
  });

  it('a connection failure reads wholly in the language shown', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
    });
    const wire = toWireError(
      classifyConnectError(err, { host: '127.0.0.1', port: 1, username: 'root' } as never, []),
    );
    const zh = explainError(translator('zh-CN'), wire);
    expect(zh).toBe(
      '连接被拒绝：127.0.0.1:1 拒绝了连接。请确认该主机上 sshd 正在运行，以及端口 1 是否正确。',
    );
    expect(explainError(translator('en'), wire)).toContain('refused the connection');
  });

  it('a failure behind a jump host reads wholly in the language shown, the hop’s cause inside', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:22'), {
      code: 'ECONNREFUSED',
    });
    const hop = classifyConnectError(
      err,
      { host: '10.0.0.9', port: 22, username: 'root' } as never,
      [],
    );
    const wire = new AmwError(
      'JUMP_FAILED',
      msg('errors.text.jumpFailed', { jump: 'bastion', error: errorText(hop) }),
    ).toWire();
    expect(explainError(translator('zh-CN'), wire)).toBe(
      '跳板机连接失败：跳板机 bastion：10.0.0.9:22 拒绝了连接。请确认该主机上 sshd 正在运行，以及端口 22 是否正确。',
    );
    expect(wire.message).toBe(
      'Jump host bastion: 10.0.0.9:22 refused the connection. Is sshd running there, and is 22 the right port?',
    );
  });

  it('an engine refusal (no such run, not a folder) reads wholly in the language shown', async () => {
    const c = core();
    const run = await c.dispatch('stages.get', { id: 99 }, { transport: 'test' });
    const scan = await c.dispatch(
      'code.analyze',
      { path: join(tempDir(), 'missing'), mode: 'rewrite' },
      { transport: 'test' },
    );
    await c.close();
    if (run.ok || scan.ok) throw new Error('accepted');
    expect(run.error.code).toBe('NOT_FOUND');
    expect(explainError(translator('zh-CN'), run.error)).toBe('未找到：没有编号为 99 的阶段运行。');
    expect(explainError(translator('en'), run.error)).toBe('Not found: No stage run 99.');
    // the English message stays for logs and readers without a dictionary
    expect(run.error.message).toBe('No stage run 99.');
    const zh = explainError(translator('zh-CN'), scan.error);
    expect(zh).toMatch(/^未找到：.*missing 既不是文件也不是文件夹。$/);
    expect(zh).not.toMatch(/is not a/);
  });

  it('rejects unknown keys and non-object input', async () => {
    const c = core();
    const extra = await c.dispatch('app.info', { sneaky: 1 }, { transport: 'test' });
    expect(!extra.ok && extra.error.code).toBe('VALIDATION');
    const wrong = await c.dispatch('jobs.get', 'abc', { transport: 'test' });
    expect(!wrong.ok && wrong.error.code).toBe('VALIDATION');
    await c.close();
  });

  it('answers UNKNOWN_METHOD for names outside the contract, even prototype ones', async () => {
    const c = core();
    for (const name of ['nope.nothing', 'toString', '__proto__', 42]) {
      const res = await c.dispatch(name, {}, { transport: 'test' });
      expect(!res.ok && res.error.code, String(name)).toBe('UNKNOWN_METHOD');
    }
    await c.close();
  });

  it('remembers settings across restarts and announces changes', async () => {
    const dir = tempDir();
    const env = { AMW_HOME: dir } as NodeJS.ProcessEnv;
    const first = createCore({ env });
    const seen: Settings[] = [];
    first.on('settings.changed', (s) => seen.push(s));
    await first.call('settings.set', { language: 'zh-CN', theme: 'dark' });
    expect(seen).toEqual([{ language: 'zh-CN', theme: 'dark' }]);
    await first.close();
    const second = createCore({ env });
    expect(await second.call('settings.get', {})).toEqual({ language: 'zh-CN', theme: 'dark' });
    await second.close();
  });

  it('reports where its data lives and the schema version', async () => {
    const dir = tempDir();
    const c = createCore({ db: join(dir, 'custom.db'), env: {} as NodeJS.ProcessEnv });
    const info = await c.call('app.info', {});
    expect(info.dbPath).toBe(join(dir, 'custom.db'));
    expect(info.dataDir).toBe(dir);
    expect(info.schemaVersion).toBeGreaterThanOrEqual(1);
    await c.close();
  });

  it('NOT_FOUND for a job that does not exist', async () => {
    const c = core();
    await expect(c.call('jobs.cancel', { id: 'missing' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await c.close();
  });
});
