import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simHostsSupported, startSimHost, type SimHost } from '../../e2e/hosts/sim-host';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
let sim: SimHost;
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

beforeAll(async () => {
  if (!support.ok) return;
  sim = await startSimHost('hostile', 'ascend-910b');
  // a hostile host: its npu-smi prints a terminal-title sequence, colours, a screen clear and
  // C1 controls inside the table (test double: the real sample with bytes injected)
  const sample = join(sim.dir, 'upper', 'sbin', 'npu-smi.txt');
  writeFileSync(
    sample,
    readFileSync(sample, 'utf8')
      .replace('910B4', '910B4\u001b]0;pwned-title\u0007\u001b[31m')
      .replace('| OK ', '| \u001b[2J\u009b6n '),
  );
}, 60_000);
afterAll(async () => sim?.stop());

d("`amw inventory` never prints a host's raw bytes (issue 17 item 4)", () => {
  it('escape sequences in npu-smi output are shown escaped, in text and --json', async () => {
    const home = tempDir();
    const env = { AMW_HOME: home, SSH_AUTH_SOCK: '' };
    const add = await amw(
      [
        'hosts',
        'add',
        'hostile',
        '--host',
        sim.host,
        '--port',
        String(sim.port),
        '--user',
        sim.user,
        '--identity',
        sim.clientKey,
      ],
      env,
    );
    expect(add.code).toBe(0);
    const text = await amw(['inventory', 'hostile', '--accept-new-host-key'], env);
    expect(text.code).toBe(0);
    expect(RAW.test(text.stdout + text.stderr)).toBe(false);
    expect(text.stdout).toContain('\\x1b]0;pwned-title\\x07');
    const json = await amw(['inventory', 'hostile', '--json'], env);
    expect(RAW.test(json.stdout)).toBe(false);
    expect(JSON.parse(json.stdout)).toMatchObject({ host: 'hostile' });
  }, 60_000);
});
