import { createHmac, randomBytes } from 'node:crypto';
import type { Client } from 'ssh2';
import { connect, type ConnectOptions, type SshEndpoint, type SshTarget } from './connect';

// a password enters the key only as a keyed hash whose key lives in this process's memory
const PASSWORD_KEY = randomBytes(32);

/**
 * user@host:port with the keys (and the password) it logs in with, for every hop of the jump
 * chain: an entry whose own credentials cannot log in must not ride on another entry's connection
 * to the same user@host:port (its test would pass, its jobs would use others' credentials). JSON,
 * not joined text: a crafted identity file path cannot make two chains read alike.
 */
export function poolKey(target: SshTarget, password?: string): string {
  const hop = (ep: SshEndpoint) => [ep.username, ep.host, ep.port, ep.identityFiles ?? []];
  return JSON.stringify([
    [...(target.jumps ?? []), target].map(hop),
    password ? createHmac('sha256', PASSWORD_KEY).update(password).digest('hex') : null,
  ]);
}

/**
 * Keeps one live connection per target and hands it to every caller; a dropped connection leaves
 * the pool at once so the next call reconnects. Idle connections close after `idleMs`.
 */
export class SshPool {
  private readonly live = new Map<
    string,
    { client: Promise<Client>; idle?: NodeJS.Timeout; users: number }
  >();

  constructor(private readonly idleMs = 60_000) {}

  async use<T>(
    target: SshTarget,
    opts: ConnectOptions,
    fn: (client: Client) => Promise<T>,
  ): Promise<T> {
    const key = poolKey(target, opts.password);
    let entry = this.live.get(key);
    if (!entry) {
      const client = connect(target, opts);
      entry = { client, users: 0 };
      this.live.set(key, entry);
      client.then(
        (c) => {
          const drop = () => {
            if (this.live.get(key)?.client === client) this.live.delete(key);
          };
          c.once('close', drop);
          c.once('error', drop);
        },
        () => {
          if (this.live.get(key)?.client === client) this.live.delete(key);
        },
      );
    }
    const e = entry;
    clearTimeout(e.idle);
    e.users++;
    try {
      return await fn(await e.client);
    } finally {
      e.users--;
      if (e.users === 0 && this.live.get(key) === e) {
        e.idle = setTimeout(() => this.close(key), this.idleMs);
        e.idle.unref();
      }
    }
  }

  /** One connection of its own, closed after `fn`: what a connection test must try afresh. */
  async fresh<T>(
    target: SshTarget,
    opts: ConnectOptions,
    fn: (client: Client) => Promise<T>,
  ): Promise<T> {
    const client = await connect(target, opts);
    try {
      return await fn(client);
    } finally {
      client.end();
    }
  }

  size(): number {
    return this.live.size;
  }

  close(key: string): void {
    const e = this.live.get(key);
    if (!e) return;
    this.live.delete(key);
    clearTimeout(e.idle);
    void e.client.then(
      (c) => c.end(),
      () => undefined,
    );
  }

  closeAll(): void {
    for (const key of [...this.live.keys()]) this.close(key);
  }
}
