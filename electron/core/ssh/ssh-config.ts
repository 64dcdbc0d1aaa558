import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import SSHConfig from 'ssh-config';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { printable, WarningList } from '../parsers/printable';
import { hasWildcard, patternListMatch, wildcardMatch } from './glob';
import { SSH_CONFIG_KEYWORDS } from './ssh-config-keywords';
import { expandHome } from './identities';
import { fsErrorText } from '../fs-error';

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

export interface SshConfigRead {
  hosts: SshConfigHost[];
  /** What was read but not applied (Match exec, non-regular Include targets, …), one line each. */
  warnings: string[];
}

const MAX_DEPTH = 16;
/** A config is text a person wrote: anything larger is not one. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;
/** Files one Include glob may expand to, and patterns an Include line may carry. */
const MAX_INCLUDE_MATCHES = 1024;
const MAX_PATTERN_LENGTH = 1024;
/** Pattern evaluations for a whole import (aliases × patterned blocks): bounded CPU. */
const MAX_PATTERN_WORK = 20_000_000;

interface ReadState {
  seen: Set<string>;
  bytes: number;
  warnings: WarningList;
  /** `IgnoreUnknown` patterns seen so far: unknown keywords they match are not warned about. */
  ignoreUnknown: string[];
}

/**
 * Reads a config file without ever blocking: opened non-blocking, and refused unless it is a
 * regular file (a FIFO, a device or a socket would stall the read forever, and with it the whole
 * engine). Capped in size.
 */
function readConfigFile(file: string, state: ReadState): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    throw new AmwError(
      'SSH_CONFIG',
      msg('errors.text.cannotRead', { path: file, error: fsErrorText(err) }),
      { file },
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw new AmwError('SSH_CONFIG', msg('errors.text.configNotRegular', { path: file }), {
        file,
      });
    if (st.size > MAX_FILE_BYTES || state.bytes + st.size > MAX_TOTAL_BYTES)
      throw new AmwError(
        'SSH_CONFIG',
        msg('errors.text.configTooLarge', { path: file, size: st.size, limit: MAX_FILE_BYTES }),
        { file, size: st.size },
      );
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n <= 0) break;
      off += n;
    }
    state.bytes += off;
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Include globs: wildcards in the last path segment (`config.d/*`, `*.conf`), matched linearly. */
function expandInclude(pattern: string, baseDir: string, state: ReadState): string[] {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    state.warnings.push(`Include pattern longer than ${MAX_PATTERN_LENGTH} characters ignored`);
    return [];
  }
  const full = expandHome(pattern);
  const path = isAbsolute(full) ? full : join(baseDir, full);
  const last = basename(path);
  const candidates = hasWildcard(last)
    ? (() => {
        try {
          return readdirSync(dirname(path))
            .filter((f) => wildcardMatch(last, f, false))
            .sort()
            .map((f) => join(dirname(path), f));
        } catch {
          return [];
        }
      })()
    : [path];
  const out: string[] = [];
  for (const f of candidates) {
    let st;
    try {
      st = statSync(f);
    } catch {
      continue; // ssh(1) ignores an Include that matches nothing
    }
    if (!st.isFile()) {
      state.warnings.push(`Include ${printable(f)} skipped: not a regular file`);
      continue;
    }
    if (out.length >= MAX_INCLUDE_MATCHES) {
      state.warnings.push(
        `Include ${printable(pattern)}: more than ${MAX_INCLUDE_MATCHES} files, rest skipped`,
      );
      break;
    }
    out.push(f);
  }
  return out;
}

/**
 * Reads a config with its Includes inlined where they stand (OpenSSH's semantics: an Include
 * inside a Host block applies under that block). Relative Include paths are under ~/.ssh.
 * Returns the text and, per Host line, the file that declared it.
 */
function readWithIncludes(
  file: string,
  state: ReadState,
  depth = 0,
): { text: string[]; origins: Map<string, string> } {
  if (depth > MAX_DEPTH)
    throw new AmwError(
      'SSH_CONFIG',
      msg('errors.text.configIncludeDepth', { depth: MAX_DEPTH, path: file }),
      {
        file,
      },
    );
  const origins = new Map<string, string>();
  if (state.seen.has(file)) return { text: [], origins };
  state.seen.add(file);
  const raw = readConfigFile(file, state);
  const out: string[] = [];
  const top = depth === 0;
  raw.split(/\r?\n/).forEach((line, i) => {
    // keyword tests without /(.+?)\s*$/, which is quadratic on long runs of spaces
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) {
      out.push(line);
      return;
    }
    const keyword = /^([^\s=]+)/.exec(trimmed)?.[1]?.toLowerCase();
    const rest = trimmed
      .slice(keyword?.length ?? 0)
      .replace(/^\s*=?/, '')
      .trim();
    if (keyword === 'ignoreunknown' && state.ignoreUnknown.length < 256)
      state.ignoreUnknown.push(...rest.split(/[\s,]+/).slice(0, 256));
    if (
      keyword &&
      !SSH_CONFIG_KEYWORDS.has(keyword) &&
      !state.ignoreUnknown.some((p) => wildcardMatch(p, keyword))
    ) {
      // ssh(1) refuses the whole file here; the import names the line and goes on without it
      state.warnings.push(
        printable(
          `line ${i + 1}${top ? '' : ` of ${file}`}: unknown ssh_config keyword "${keyword.slice(0, 60)}", ignored`,
        ),
      );
      return;
    }
    if (keyword === 'include' && rest) {
      for (const pattern of rest.split(/\s+/)) {
        for (const f of expandInclude(
          pattern.replace(/^"|"$/g, ''),
          join(homedir(), '.ssh'),
          state,
        )) {
          const nested = readWithIncludes(f, state, depth + 1);
          for (const l of nested.text) out.push(l);
          for (const [k, v] of nested.origins) if (!origins.has(k)) origins.set(k, v);
        }
      }
      return;
    }
    if (keyword === 'host' && rest)
      for (const alias of rest.split(/\s+/)) if (!origins.has(alias)) origins.set(alias, file);
    out.push(line);
  });
  return { text: out, origins };
}

const isPattern = (alias: string) => /[*?!]/.test(alias);

export function defaultSshConfigPath(): string {
  return join(homedir(), '.ssh', 'config');
}

type Value = string | { val: string; separator: string; quoted?: boolean }[];
interface Directive {
  param: string;
  value: Value;
}
interface Section {
  kind: 'global' | 'host' | 'match';
  index: number;
  patterns: string[];
  criteria: Record<string, Value>;
  directives: Directive[];
  line: string;
}

const valuesOf = (v: Value): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.map((x) => x.val) : [];
const textOf = (v: Value): string => valuesOf(v).join(' ');

/** Directives ssh(1) accumulates instead of taking the first value. */
const REPEATABLE = new Set(['identityfile', 'certificatefile', 'localforward', 'remoteforward']);

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? '';
  }
}

/**
 * Splits the parsed config into sections (top-level directives, Host blocks, Match blocks) and
 * indexes Host blocks without wildcards by name, so resolving N aliases visits each alias's own
 * blocks plus the patterned ones — not every block for every alias.
 */
function sections(config: ReturnType<typeof SSHConfig.parse>): Section[] {
  const out: Section[] = [];
  let global: Section | null = null;
  for (const line of config as unknown as (Directive & {
    type: number;
    config?: (Directive & { type: number })[];
    criteria?: Record<string, Value>;
  })[]) {
    if (line.type !== SSHConfig.DIRECTIVE) continue;
    const kind = /^host$/i.test(line.param) ? 'host' : /^match$/i.test(line.param) ? 'match' : null;
    if (!kind) {
      if (!global) {
        global = {
          kind: 'global',
          index: out.length,
          patterns: [],
          criteria: {},
          directives: [],
          line: '',
        };
        out.push(global);
      }
      global.directives.push({ param: line.param, value: line.value });
      continue;
    }
    global = null;
    out.push({
      kind,
      index: out.length,
      patterns: kind === 'host' ? valuesOf(line.value) : [],
      criteria: kind === 'match' ? (line.criteria ?? {}) : {},
      directives: (line.config ?? [])
        .filter((d) => d.type === SSHConfig.DIRECTIVE)
        .map((d) => ({ param: d.param, value: d.value })),
      line: `${line.param} ${textOf(line.value)}`,
    });
  }
  return out;
}

/**
 * Resolves every concrete (non-pattern) Host alias through Host patterns, Match blocks and
 * Includes. Nothing in the file is ever executed: `Match exec` is never run (the block does not
 * apply, with a warning), and no name is looked up (CanonicalizeHostName is not followed).
 */
export function readSshConfigWithWarnings(file = defaultSshConfigPath()): SshConfigRead {
  const state: ReadState = {
    seen: new Set(),
    bytes: 0,
    warnings: new WarningList(),
    ignoreUnknown: [],
  };
  const { text, origins } = readWithIncludes(file, state);
  let config: ReturnType<typeof SSHConfig.parse>;
  try {
    config = SSHConfig.parse(text.join('\n'));
  } catch (err) {
    throw new AmwError(
      'SSH_CONFIG',
      msg('errors.text.configUnparsable', { path: file, error: (err as Error).message }),
      {
        file,
      },
    );
  }
  const all = sections(config);
  const byName = new Map<string, Section[]>();
  const general: Section[] = [];
  for (const s of all) {
    if (s.kind === 'host' && s.patterns.every((p) => !isPattern(p) && !p.includes(','))) {
      for (const p of new Set(s.patterns.map((x) => x.toLowerCase()))) {
        const list = byName.get(p) ?? [];
        list.push(s);
        byName.set(p, list);
      }
    } else general.push(s);
  }
  const aliases = [...origins.keys()].filter((a) => !isPattern(a));
  if (aliases.length * general.length > MAX_PATTERN_WORK)
    throw new AmwError(
      'SSH_CONFIG',
      msg('errors.text.configTooMany', {
        path: file,
        hosts: aliases.length,
        blocks: general.length,
      }),
      { file },
    );

  const warned = new Set<string>();
  const warnOnce = (s: Section, msg: string) => {
    const key = `${s.index}:${msg}`;
    if (warned.has(key)) return;
    warned.add(key);
    state.warnings.push(printable(`${s.line.slice(0, 120)}: ${msg.slice(0, 200)}`));
  };
  const me = localUser();

  const hosts: SshConfigHost[] = [];
  for (const alias of aliases) {
    const own = byName.get(alias.toLowerCase()) ?? [];
    // merge the alias's own blocks and the general ones in file order
    const applicable: Section[] = [];
    for (let i = 0, j = 0; i < own.length || j < general.length;) {
      if (j >= general.length || (i < own.length && own[i]!.index < general[j]!.index))
        applicable.push(own[i++]!);
      else applicable.push(general[j++]!);
    }
    const values = new Map<string, string[]>();
    const set = (d: Directive) => {
      const key = d.param.toLowerCase();
      const v = textOf(d.value);
      if (REPEATABLE.has(key)) values.set(key, [...(values.get(key) ?? []), v]);
      else if (!values.has(key)) values.set(key, [v]);
    };
    const first = (k: string) => values.get(k)?.[0];
    for (const s of applicable) {
      if (s.kind === 'global') s.directives.forEach(set);
      else if (s.kind === 'host') {
        if (patternListMatch(s.patterns, alias)) s.directives.forEach(set);
      } else if (
        matchApplies(s, alias, first('hostname') ?? alias, first('user') ?? me, me, warnOnce)
      )
        s.directives.forEach(set);
    }
    const jump = first('proxyjump');
    const port = Number(first('port') ?? 22);
    hosts.push({
      alias,
      hostname: (first('hostname') ?? alias).replace(/%h/g, alias),
      port: Number.isInteger(port) && port > 0 && port < 65536 ? port : 22,
      user: first('user') ?? null,
      identityFiles: (values.get('identityfile') ?? []).map((f) => f.replace(/^"|"$/g, '')),
      proxyJump: jump && jump.toLowerCase() !== 'none' ? jump.split(',').map((j) => j.trim()) : [],
      file: origins.get(alias)!,
    });
  }
  return { hosts, warnings: state.warnings.done() };
}

function matchApplies(
  s: Section,
  alias: string,
  hostname: string,
  user: string,
  local: string,
  warn: (s: Section, msg: string) => void,
): boolean {
  for (const [rawKey, value] of Object.entries(s.criteria)) {
    const negated = rawKey.startsWith('!');
    const key = rawKey.replace(/^!/, '').toLowerCase();
    const list = valuesOf(value);
    let hit: boolean;
    switch (key) {
      case 'all':
        hit = true;
        break;
      case 'host':
        hit = patternListMatch(list, hostname);
        break;
      case 'originalhost':
        hit = patternListMatch(list, alias);
        break;
      case 'user':
        hit = patternListMatch(list, user);
        break;
      case 'localuser':
        hit = patternListMatch(list, local);
        break;
      case 'exec':
        warn(s, 'Match exec is never run by the workbench; this block was not applied');
        return false;
      default:
        warn(s, `Match ${key} is not supported; this block was not applied`);
        return false;
    }
    if (hit === negated) return false;
  }
  return true;
}

/** Every concrete Host alias (see readSshConfigWithWarnings). */
export function readSshConfig(file = defaultSshConfigPath()): SshConfigHost[] {
  return readSshConfigWithWarnings(file).hosts;
}
