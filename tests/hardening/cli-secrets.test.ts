import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SIM_PASSWORD,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
let sim: SimHost;
let key: string;
let keyDir: string | undefined;
const PASSPHRASE = 'correct horse battery';

beforeAll(async () => {
  if (!support.ok) return;
  sim = await startSimHost('secrets', 'ascend-910b');
  keyDir = mkdtempSync(join(tmpdir(), 'amw-key-'));
  key = join(keyDir, 'id_enc');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-f', key]);
  appendFileSync(join(sim.dir, 'authorized_keys'), readFileSync(`${key}.pub`));
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

d('CLI secrets never on the command line (issue 17 item 9)', () => {
  const base = (home: string, name: string, extra: string[] = []) => [
    'hosts',
    'add',
    name,
    '--host',
    sim.host,
    '--port',
    String(sim.port),
    '--user',
    sim.user,
    ...extra,
  ];

  it('`hosts add --password-stdin` logs in with the password at once and says so', async () => {
    const home = tempDir();
    const env = { AMW_HOME: home, SSH_AUTH_SOCK: '' };
    const ok = await amw(
      [...base(home, 'pw'), '--password-stdin', '--accept-new-host-key'],
      env,
      `${SIM_PASSWORD}\n`,
    );
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/Added host pw\.\npw: connected in \d+ ms/);
    const bad = await amw(
      [...base(home, 'pw2'), '--password-stdin', '--accept-new-host-key'],
      env,
      'wrong\n',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Host pw2 was added, but logging in failed/);
    expect(bad.stderr).toMatch(/Authentication failed/);
    // the password is nowhere in the store
    expect(readFileSync(join(home, 'amw.db')).includes(SIM_PASSWORD)).toBe(false);
  });

  it('an encrypted key: --passphrase-stdin or AMW_KEY_PASSPHRASE; without it, a clear refusal', async () => {
    const home = tempDir();
    const env = { AMW_HOME: home, SSH_AUTH_SOCK: '' };
    expect((await amw(base(home, 'enc', ['--identity', key]), env)).code).toBe(0);
    const none = await amw(['hosts', 'test', 'enc', '--accept-new-host-key'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/protected by a passphrase/);
    const stdin = await amw(
      ['hosts', 'test', 'enc', '--accept-new-host-key', '--passphrase-stdin'],
      env,
      `${PASSPHRASE}\n`,
    );
    expect(stdin.stdout).toMatch(/enc: connected in \d+ ms/);
    const fromEnv = await amw(['hosts', 'test', 'enc'], { ...env, AMW_KEY_PASSPHRASE: PASSPHRASE });
    expect(fromEnv.stdout).toMatch(/enc: connected in \d+ ms/);
    const wrong = await amw(['hosts', 'test', 'enc'], { ...env, AMW_KEY_PASSPHRASE: 'nope' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/Wrong passphrase/);
    const both = await amw(
      ['hosts', 'test', 'enc', '--password-stdin', '--passphrase-stdin'],
      env,
      'x\n',
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/Standard input carries one secret/);
  });
});
