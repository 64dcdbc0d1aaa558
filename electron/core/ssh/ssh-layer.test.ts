import { execFileSync, spawn } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simHostsSupported, startSimHost, type SimHost } from '../../../e2e/hosts/sim-host';
import { tempDir } from '../../../tests/support/temp';
import { AmwError } from '../../../shared/errors';
import { connect, type ConnectOptions } from './connect';
import { exec } from './exec';
import { loadIdentity } from './identities';
import { KnownHosts } from './known-hosts';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;

function keygen(dir: string, name: string, args: string[]): string {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-C', name, '-f', file, ...args]);
  chmodSync(file, 0o600);
  return file;
}

describe('private keys', () => {
  it('loads ed25519, ecdsa and rsa, in OpenSSH and PEM formats', async () => {
    const dir = tempDir();
    const files = [
      keygen(dir, 'ed', ['-t', 'ed25519', '-N', '']),
      keygen(dir, 'ec', ['-t', 'ecdsa', '-b', '256', '-N', '']),
      keygen(dir, 'rsa', ['-t', 'rsa', '-b', '2048', '-N', '']),
      keygen(dir, 'rsa-pem', ['-t', 'rsa', '-b', '2048', '-N', '', '-m', 'PEM']),
      keygen(dir, 'ec-pem', ['-t', 'ecdsa', '-b', '256', '-N', '', '-m', 'PEM']),
    ];
    const types = await Promise.all(files.map(async (f) => (await loadIdentity(f)).key.type));
    expect(types).toEqual([
      'ssh-ed25519',
      'ecdsa-sha2-nistp256',
      'ssh-rsa',
      'ssh-rsa',
      'ecdsa-sha2-nistp256',
    ]);
  });

  it('asks for a passphrase, refuses a wrong one, and says when none was given', async () => {
    const dir = tempDir();
    const file = keygen(dir, 'locked', ['-t', 'ed25519', '-N', 'correct horse']);
    const asked: string[] = [];
    const ok = await loadIdentity(file, async (f) => {
      asked.push(f);
      return 'correct horse';
    });
    expect(ok.key.type).toBe('ssh-ed25519');
    expect(asked).toEqual([file]);
    await expect(loadIdentity(file, async () => 'wrong')).rejects.toMatchObject({
      code: 'KEY_UNREADABLE',
      message: expect.stringMatching(/Wrong passphrase/),
    });
    await expect(loadIdentity(file)).rejects.toMatchObject({
      code: 'KEY_UNREADABLE',
      detail: { reason: 'passphrase' },
    });
  });

  it('explains a .pub file, a missing file and garbage', async () => {
    const dir = tempDir();
    const file = keygen(dir, 'k', ['-t', 'ed25519', '-N', '']);
    await expect(loadIdentity(`${file}.pub`)).rejects.toBeInstanceOf(AmwError);
    await expect(loadIdentity(join(dir, 'missing'))).rejects.toMatchObject({
      code: 'KEY_UNREADABLE',
      detail: { reason: 'unreadable' },
    });
  });
});

describe('timeouts without a host', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    // accepts TCP and then says nothing: a firewall or a hung sshd looks like this
    server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  it('a silent server is CONNECT_TIMEOUT', async () => {
    const opts: ConnectOptions = {
      knownHosts: new KnownHosts(join(tempDir(), 'kh')),
      onUnknownHostKey: async () => false,
      agent: null,
      readyTimeoutMs: 300,
    };
    await expect(connect({ host: '127.0.0.1', port, username: 'x' }, opts)).rejects.toMatchObject({
      code: 'CONNECT_TIMEOUT',
    });
  });

  it('cancelling a connection attempt is CANCELLED', async () => {
    const controller = new AbortController();
    const opts: ConnectOptions = {
      knownHosts: new KnownHosts(join(tempDir(), 'kh')),
      onUnknownHostKey: async () => false,
      agent: null,
      signal: controller.signal,
    };
    const p = connect({ host: '127.0.0.1', port, username: 'x' }, opts);
    setTimeout(() => controller.abort(), 50);
    await expect(p).rejects.toMatchObject({ code: 'CANCELLED' });
  });
});

d('against a real sshd', () => {
  let sim: SimHost;
  beforeAll(async () => {
    sim = await startSimHost('layer', 'ascend-910b');
  });
  afterAll(async () => {
    await sim?.stop();
  });
  const opts = (extra: Partial<ConnectOptions> = {}): ConnectOptions => ({
    knownHosts: new KnownHosts(join(tempDir(), 'kh')),
    onUnknownHostKey: async () => true,
    agent: null,
    ...extra,
  });

  it('logs in through ssh-agent with no key file given', async () => {
    const dir = tempDir();
    const sock = join(dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 100; i++) {
        try {
          execFileSync('ssh-add', [sim.clientKey], { env: { SSH_AUTH_SOCK: sock }, stdio: 'pipe' });
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      const client = await connect(
        { host: sim.host, port: sim.port, username: sim.user, identityFiles: [] },
        opts({ agent: sock }),
      );
      const r = await exec(client, 'echo via-agent');
      expect(r.stdout.trim()).toBe('via-agent');
      client.end();
    } finally {
      agent.kill();
    }
  });

  it('exec: exit codes, stderr, stdin, output caps and timeouts', async () => {
    const client = await connect(
      { host: sim.host, port: sim.port, username: sim.user, identityFiles: [sim.clientKey] },
      opts(),
    );
    const fail = await exec(client, 'echo out; echo err >&2; exit 7');
    expect(fail).toMatchObject({ code: 7, stdout: 'out\n', stderr: 'err\n', truncated: false });
    expect((await exec(client, 'cat', { stdin: 'from stdin' })).stdout).toBe('from stdin');
    const big = await exec(client, 'head -c 100000 /dev/zero', { maxBytes: 1000 });
    expect(big.stdout).toHaveLength(1000);
    expect(big.truncated).toBe(true);
    await expect(exec(client, 'sleep 30', { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'COMMAND_TIMEOUT',
    });
    const controller = new AbortController();
    const running = exec(client, 'sleep 30', { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
    // the connection is still good after both
    expect((await exec(client, 'echo still-here')).stdout).toBe('still-here\n');
    client.end();
  });
});
