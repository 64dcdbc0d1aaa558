import ssh2, { type AuthenticationType, type Client, type ConnectConfig } from 'ssh2';
import type { Duplex } from 'node:stream';
import type { HostKeyInfo } from '../../../shared/api';
import { AmwError, errorText } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { loadIdentities } from './identities';
import { fingerprint, keyTypeOf, type KnownHosts } from './known-hosts';

/** One SSH endpoint. A target may be reached through a chain of jump hosts, first hop first. */
export interface SshEndpoint {
  /** Display name (the host's name in the workbench, or the ssh_config alias). */
  name?: string;
  host: string;
  port: number;
  username: string;
  identityFiles?: string[];
}

export interface SshTarget extends SshEndpoint {
  jumps?: SshEndpoint[];
}

/** What the user is shown for a key not on record (type, SHA256 fingerprint, other known types). */
export type UnknownHostKey = HostKeyInfo;

export interface ConnectOptions {
  knownHosts: KnownHosts;
  /** Asked when a host key is not on record; resolve true to trust it (it is then saved). */
  onUnknownHostKey: (info: UnknownHostKey) => Promise<boolean>;
  /** Path of the ssh-agent socket; defaults to SSH_AUTH_SOCK; null disables the agent. */
  agent?: string | null;
  /** Used for password and keyboard-interactive auth; never stored by this module. */
  password?: string;
  askPassphrase?: (file: string) => Promise<string | null>;
  readyTimeoutMs?: number;
  keepaliveIntervalMs?: number;
  signal?: AbortSignal;
}

const HOST_KEY_ALGOS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/** Negotiate a key type we already trust first, as ssh(1) does, so a known host is not "unknown". */
function hostKeyOrder(known: string[]): string[] {
  const wanted = new Set(
    known.flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t])),
  );
  return [
    ...HOST_KEY_ALGOS.filter((a) => wanted.has(a)),
    ...HOST_KEY_ALGOS.filter((a) => !wanted.has(a)),
  ];
}

const label = (ep: SshEndpoint) => ep.name ?? `${ep.username}@${ep.host}:${ep.port}`;

/** Opens an authenticated connection, through every jump host in turn, verifying every key. */
export async function connect(target: SshTarget, opts: ConnectOptions): Promise<Client> {
  const hops: SshEndpoint[] = [...(target.jumps ?? []), target];
  let previous: Client | undefined;
  const opened: Client[] = [];
  try {
    for (const [i, hop] of hops.entries()) {
      const isJump = i < hops.length - 1;
      let sock: Duplex | undefined;
      if (previous) {
        const via = previous;
        const viaHop = hops[i - 1]!;
        sock = await new Promise<Duplex>((resolve, reject) => {
          via.forwardOut('127.0.0.1', 0, hop.host, hop.port, (err, stream) => {
            if (err) {
              reject(
                new AmwError(
                  'JUMP_FAILED',
                  msg('errors.text.jumpCannotForward', {
                    jump: label(viaHop),
                    target: `${hop.host}:${hop.port}`,
                    error: err.message,
                  }),
                  { jump: label(viaHop), target: `${hop.host}:${hop.port}`, cause: err.message },
                ),
              );
            } else resolve(stream);
          });
        });
      }
      try {
        previous = await connectOne(hop, opts, sock);
      } catch (err) {
        if (
          isJump &&
          err instanceof AmwError &&
          !err.code.startsWith('HOST_KEY') &&
          err.code !== 'CANCELLED'
        ) {
          // the hop's own explanation inside, in the reader's language as well
          const inner = errorText(err);
          throw new AmwError(
            'JUMP_FAILED',
            msg('errors.text.jumpFailed', { jump: label(hop), error: inner }),
            {
              jump: label(hop),
              cause: err.toWire(),
            },
          );
        }
        throw err;
      }
      opened.push(previous);
    }
  } catch (err) {
    for (const c of opened) c.end();
    throw err;
  }
  const final = previous!;
  // Closing the target closes the hops it rode on.
  final.once('close', () => opened.slice(0, -1).forEach((c) => c.end()));
  return final;
}

async function connectOne(ep: SshEndpoint, opts: ConnectOptions, sock?: Duplex): Promise<Client> {
  opts.signal?.throwIfAborted?.();
  const identities = await loadIdentities(ep.identityFiles, opts.askPassphrase);
  const agent = opts.agent === undefined ? process.env.SSH_AUTH_SOCK : opts.agent;
  const methods: { label: string; auth: AuthenticationType | Record<string, unknown> }[] = [];
  if (agent)
    methods.push({
      label: 'agent',
      auth: { type: 'agent', username: ep.username, agent } as never,
    });
  for (const id of identities) {
    methods.push({
      label: `key ${id.file}`,
      auth: { type: 'publickey', username: ep.username, key: id.key } as never,
    });
  }
  if (opts.password !== undefined) {
    const password = opts.password;
    methods.push({
      label: 'password',
      auth: { type: 'password', username: ep.username, password } as never,
    });
    methods.push({
      label: 'keyboard-interactive',
      auth: {
        type: 'keyboard-interactive',
        username: ep.username,
        prompt: (
          _n: string,
          _i: string,
          _l: string,
          prompts: unknown[],
          finish: (r: string[]) => void,
        ) => finish(prompts.map(() => password)),
      } as never,
    });
  }
  const tried: string[] = [];
  let hostKeyProblem: AmwError | undefined;
  const knownTypes = opts.knownHosts.knownTypes(ep.host, ep.port);

  const client = new ssh2.Client();
  const config: ConnectConfig = {
    host: ep.host,
    port: ep.port,
    username: ep.username,
    sock: sock as ConnectConfig['sock'],
    readyTimeout: opts.readyTimeoutMs ?? 20_000,
    keepaliveInterval: opts.keepaliveIntervalMs ?? 15_000,
    keepaliveCountMax: 3,
    algorithms: { serverHostKey: hostKeyOrder(knownTypes) as never },
    authHandler: (_left, _partial, next) => {
      const m = methods.shift();
      if (!m) return false;
      tried.push(m.label);
      next(m.auth as AuthenticationType);
      return undefined as never;
    },
    // Never an async function: ssh2 treats a returned Promise as "accept". Answer through verify().
    hostVerifier: (blob: Buffer, verify: (ok: boolean) => void) => {
      const key = { type: keyTypeOf(blob), blob };
      const verdict = opts.knownHosts.verify(ep.host, ep.port, key);
      if (verdict.status === 'known') return verify(true);
      if (verdict.status === 'mismatch' || verdict.status === 'revoked') {
        const stored = fingerprint(verdict.entry.blob);
        hostKeyProblem = new AmwError(
          'HOST_KEY_MISMATCH',
          verdict.status === 'revoked'
            ? msg('errors.text.hostKeyRevoked', {
                where: label(ep),
                fingerprint: fingerprint(blob),
                file: verdict.entry.file,
                line: verdict.entry.line,
              })
            : msg('errors.text.hostKeyChanged', {
                where: label(ep),
                stored,
                offered: fingerprint(blob),
                line: verdict.entry.line,
                file: verdict.entry.file,
                command: `ssh-keygen -R ${ep.port === 22 ? ep.host : `'[${ep.host}]:${ep.port}'`} -f ${verdict.entry.file}`,
              }),
          {
            host: ep.host,
            port: ep.port,
            keyType: key.type,
            storedFingerprint: stored,
            offeredFingerprint: fingerprint(blob),
            file: verdict.entry.file,
            line: verdict.entry.line,
            revoked: verdict.status === 'revoked',
          },
        );
        return verify(false);
      }
      const info: UnknownHostKey = {
        name: label(ep),
        host: ep.host,
        port: ep.port,
        keyType: key.type,
        fingerprint: fingerprint(blob),
        knownTypes: verdict.otherTypes,
      };
      opts.onUnknownHostKey(info).then(
        (ok) => {
          if (ok) opts.knownHosts.add(ep.host, ep.port, key);
          else {
            hostKeyProblem = new AmwError(
              'HOST_KEY_UNKNOWN',
              msg('errors.text.hostKeyUnknown', {
                where: label(ep),
                keyType: info.keyType,
                fingerprint: info.fingerprint,
              }),
              info,
            );
          }
          verify(ok);
        },
        () => verify(false),
      );
    },
  };

  return new Promise<Client>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      client.end();
      reject(new AmwError('CANCELLED', `Connecting to ${label(ep)} was cancelled.`));
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    client.once('ready', () => {
      if (settled) return client.end();
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(client);
    });
    // `on`, never `once`: ssh2 can emit more than one error (a timeout, then "connection lost"),
    // and an error event with no listener would take the whole process down.
    client.on('error', (err: Error & { code?: string; level?: string }) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      reject(hostKeyProblem ?? classifyConnectError(err, ep, tried));
    });
    client.once('close', () => {
      if (settled) return;
      settled = true;
      reject(
        hostKeyProblem ??
          new AmwError(
            'DISCONNECTED',
            msg('errors.text.closedDuringHandshake', { where: label(ep) }),
            {
              host: ep.host,
              port: ep.port,
            },
          ),
      );
    });
    try {
      client.connect(config);
    } catch (err) {
      settled = true;
      reject(classifyConnectError(err as Error, ep, tried));
    }
  });
}

/** Turns a socket or protocol failure into a code and a plain explanation with the next step. */
export function classifyConnectError(
  err: Error & { code?: string; level?: string },
  ep: SshEndpoint,
  tried: string[],
): AmwError {
  const where = `${ep.host}:${ep.port}`;
  // messageKey: the same explanation in the user's language (explainError renders it)
  const base = { host: ep.host, port: ep.port, where, cause: err.message, errno: err.code ?? '' };
  const k = (reason: string) => ({ ...base, messageKey: `errors.ssh.${reason}` });
  switch (err.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new AmwError(
        'DNS',
        `The host name ${ep.host} cannot be resolved. Check the spelling, the HostName in your ssh config, or your DNS/VPN.`,
        k('dns'),
      );
    case 'ECONNREFUSED':
      return new AmwError(
        'CONNECTION_REFUSED',
        `${where} refused the connection. Is sshd running there, and is ${ep.port} the right port?`,
        k('refused'),
      );
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new AmwError(
        'CONNECT_TIMEOUT',
        `${where} did not answer (${err.code}). Check the address, firewalls, or whether you need a jump host.`,
        k('unreachable'),
      );
    case 'ECONNRESET':
      return new AmwError(
        'DISCONNECTED',
        `${where} reset the connection during the handshake. The server may limit connections (MaxStartups) or block your address.`,
        k('reset'),
      );
  }
  if (err.level === 'client-timeout' || /timed out/i.test(err.message)) {
    return new AmwError(
      'CONNECT_TIMEOUT',
      `${where} did not complete the SSH handshake in time. Check the address, firewalls, or whether you need a jump host.`,
      k('handshakeTimeout'),
    );
  }
  if (err.level === 'client-authentication') {
    const methods = tried.length ? tried.join(', ') : 'none (no agent, no key, no password)';
    return new AmwError(
      'AUTH_FAILED',
      `${ep.username}@${where} rejected every login method tried: ${methods}. Check the user name, that your public key is in ~/.ssh/authorized_keys there, or give a password.`,
      {
        ...k(tried.length ? 'auth' : 'authNone'),
        username: ep.username,
        tried,
        methods: tried.join(', '),
      },
    );
  }
  if (/handshake|kex|no matching/i.test(err.message)) {
    return new AmwError(
      'DISCONNECTED',
      `The SSH handshake with ${where} failed: ${err.message}`,
      k('handshake'),
    );
  }
  return new AmwError(
    'DISCONNECTED',
    `The connection to ${where} failed: ${err.message}`,
    k('other'),
  );
}
