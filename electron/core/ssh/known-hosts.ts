import { createHash, createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { wildcardMatch } from './glob';

/**
 * OpenSSH known_hosts, read the way ssh(1) reads it: plain and hashed (`|1|salt|hmac`) host
 * patterns, `[host]:port` for non-22 ports, wildcards and negation, `@revoked` and
 * `@cert-authority` markers. The app writes only to its own file; the user's file is read-only.
 */

export interface HostKey {
  /** e.g. ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa */
  type: string;
  /** The raw public key blob (what the server sends). */
  blob: Buffer;
}

export interface KnownHostEntry {
  file: string;
  line: number;
  marker: '@revoked' | '@cert-authority' | null;
  patterns: string;
  type: string;
  blob: Buffer;
}

export type HostKeyVerdict =
  | { status: 'known'; entry: KnownHostEntry }
  | { status: 'unknown'; otherTypes: string[] }
  | { status: 'mismatch'; entry: KnownHostEntry }
  | { status: 'revoked'; entry: KnownHostEntry };

/** `SHA256:base64` without padding, as `ssh-keygen -lf` prints it. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type is the first SSH string inside the blob. */
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return len > 0 && len < 64 && blob.length >= 4 + len
    ? blob.subarray(4, 4 + len).toString('latin1')
    : 'unknown';
}

/** The name a host is stored under: `host`, or `[host]:port` off port 22. */
export function hostToken(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const parts = line.split(/\s+/);
    let marker: KnownHostEntry['marker'] = null;
    if (parts[0] === '@revoked' || parts[0] === '@cert-authority')
      marker = parts.shift() as KnownHostEntry['marker'];
    const [patterns, type, b64] = parts;
    if (!patterns || !type || !b64) return;
    // real pattern lists are a few names; a huge one would make every match slow
    if (patterns.length > 4096) return;
    const blob = Buffer.from(b64, 'base64');
    // a line whose key does not decode to its own declared type is damaged: skip it, as ssh(1) does
    if (keyTypeOf(blob) !== type) return;
    entries.push({ file, line: i + 1, marker, patterns, type, blob });
  });
  return entries;
}

function hashedMatch(pattern: string, token: string): boolean {
  const m = /^\|1\|([^|]+)\|(.+)$/.exec(pattern);
  if (!m) return false;
  const hmac = createHmac('sha1', Buffer.from(m[1]!, 'base64')).update(token).digest('base64');
  return hmac === m[2];
}

/** Does a comma-separated pattern list match this host? A matching `!pattern` vetoes. */
export function patternsMatch(patterns: string, host: string, port: number): boolean {
  const token = hostToken(host, port);
  if (patterns.startsWith('|1|')) return hashedMatch(patterns, token);
  let matched = false;
  for (const p of patterns.split(',')) {
    const negated = p.startsWith('!');
    const pat = negated ? p.slice(1) : p;
    if (wildcardMatch(pat, token)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

export class KnownHosts {
  /**
   * @param appFile the workbench's own known_hosts (written on confirmed first use)
   * @param readOnlyFiles other files consulted, such as ~/.ssh/known_hosts
   */
  constructor(
    readonly appFile: string,
    readonly readOnlyFiles: string[] = [],
  ) {}

  entries(): KnownHostEntry[] {
    const out: KnownHostEntry[] = [];
    for (const file of [this.appFile, ...this.readOnlyFiles]) {
      if (!existsSync(file)) continue;
      try {
        out.push(...parseKnownHosts(readFileSync(file, 'utf8'), file));
      } catch {
        // an unreadable user file is skipped, like ssh(1) does
      }
    }
    return out;
  }

  /** Key types already on record for a host, so key exchange can prefer them (as ssh(1) does). */
  knownTypes(host: string, port: number): string[] {
    return [
      ...new Set(
        this.entries()
          .filter((e) => e.marker === null && patternsMatch(e.patterns, host, port))
          .map((e) => e.type),
      ),
    ];
  }

  verify(host: string, port: number, key: HostKey): HostKeyVerdict {
    const matching = this.entries().filter((e) => patternsMatch(e.patterns, host, port));
    const revoked = matching.find((e) => e.marker === '@revoked' && e.blob.equals(key.blob));
    if (revoked) return { status: 'revoked', entry: revoked };
    const plain = matching.filter((e) => e.marker === null);
    const exact = plain.find((e) => e.type === key.type && e.blob.equals(key.blob));
    if (exact) return { status: 'known', entry: exact };
    const sameType = plain.find((e) => e.type === key.type);
    if (sameType) return { status: 'mismatch', entry: sameType };
    return { status: 'unknown', otherTypes: [...new Set(plain.map((e) => e.type))] };
  }

  /** Records a confirmed key in the app's file, hashed like `HashKnownHosts yes`. */
  add(host: string, port: number, key: HostKey): void {
    mkdirSync(dirname(this.appFile), { recursive: true });
    const salt = randomBytes(20);
    const token = hostToken(host, port);
    const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(token).digest('base64')}`;
    appendFileSync(this.appFile, `${hashed} ${key.type} ${key.blob.toString('base64')}\n`, {
      mode: 0o600,
    });
  }
}
