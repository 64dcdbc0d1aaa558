import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import SSHConfig from 'ssh-config';
import { AmwError } from '../../../shared/errors';
import { expandHome } from './identities';

/** A concrete host from ssh_config, resolved the way ssh(1) resolves `ssh ALIAS`. */
export interface SshConfigHost {
  alias: string;
  hostname: string;
  port: number;
  user: string | null;
  identityFiles: string[];
  /** ProxyJump hops, first hop first, as written (aliases or [user@]host[:port]). */
  proxyJump: string[];
  /** Which file declared the alias. */
  file: string;
}

const MAX_DEPTH = 16;

/** Minimal glob for Include: wildcards in the last path segment (`config.d/*`, `*.conf`). */
function expandInclude(pattern: string, baseDir: string): string[] {
  const full = expandHome(pattern);
  const path = isAbsolute(full) ? full : join(baseDir, full);
  if (!/[*?]/.test(basename(path))) return existsSync(path) ? [path] : [];
  const dir = dirname(path);
  if (!existsSync(dir)) return [];
  const re = new RegExp(
    `^${basename(path)
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return readdirSync(dir)
    .filter((f) => re.test(f))
    .sort()
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

/**
 * Reads a config with its Includes inlined where they stand (OpenSSH's semantics: an Include
 * inside a Host block applies under that block). Relative Include paths are under ~/.ssh.
 * Returns the text and, per Host line, the file that declared it.
 */
function readWithIncludes(
  file: string,
  depth = 0,
  seen = new Set<string>(),
): { text: string; origins: Map<string, string> } {
  if (depth > MAX_DEPTH)
    throw new AmwError('SSH_CONFIG', `Include nesting deeper than ${MAX_DEPTH} at ${file}`, {
      file,
    });
  if (seen.has(file)) return { text: '', origins: new Map() };
  seen.add(file);
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AmwError('SSH_CONFIG', `Cannot read ${file}: ${(err as Error).message}`, { file });
  }
  const origins = new Map<string, string>();
  const out: string[] = [];
  for (const line of raw.split(/\r?\n/)) {
    const inc = /^\s*Include\s+(.+?)\s*$/i.exec(line);
    if (inc) {
      for (const pattern of inc[1]!.split(/\s+/)) {
        for (const f of expandInclude(pattern.replace(/^"|"$/g, ''), join(homedir(), '.ssh'))) {
          const nested = readWithIncludes(f, depth + 1, seen);
          out.push(nested.text);
          for (const [k, v] of nested.origins) if (!origins.has(k)) origins.set(k, v);
        }
      }
      continue;
    }
    const host = /^\s*Host\s+(.+?)\s*$/i.exec(line);
    if (host)
      for (const alias of host[1]!.split(/\s+/)) if (!origins.has(alias)) origins.set(alias, file);
    out.push(line);
  }
  return { text: out.join('\n'), origins };
}

const isPattern = (alias: string) => /[*?!]/.test(alias);

export function defaultSshConfigPath(): string {
  return join(homedir(), '.ssh', 'config');
}

/** Every concrete (non-pattern) Host alias, fully resolved through Host patterns and Includes. */
export function readSshConfig(file = defaultSshConfigPath()): SshConfigHost[] {
  const { text, origins } = readWithIncludes(file);
  let config: ReturnType<typeof SSHConfig.parse>;
  try {
    config = SSHConfig.parse(text);
  } catch (err) {
    throw new AmwError('SSH_CONFIG', `${file} cannot be parsed: ${(err as Error).message}`, {
      file,
    });
  }
  const hosts: SshConfigHost[] = [];
  for (const [alias, origin] of origins) {
    if (isPattern(alias)) continue;
    const c = config.compute(alias) as Record<string, string | string[] | undefined>;
    const one = (k: string) => {
      const v = c[k];
      return Array.isArray(v) ? v[0] : v;
    };
    const idf = c.IdentityFile;
    const jump = one('ProxyJump');
    const port = Number(one('Port') ?? 22);
    hosts.push({
      alias,
      hostname: (one('HostName') ?? alias).replace(/%h/g, alias),
      port: Number.isInteger(port) && port > 0 && port < 65536 ? port : 22,
      user: one('User') ?? null,
      identityFiles: (Array.isArray(idf) ? idf : idf ? [idf] : []).map((f) =>
        f.replace(/^"|"$/g, ''),
      ),
      proxyJump: jump && jump.toLowerCase() !== 'none' ? jump.split(',').map((j) => j.trim()) : [],
      file: origin,
    });
  }
  return hosts;
}
