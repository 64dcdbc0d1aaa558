import type { Report } from '../../../shared/api';

export interface RedactOptions {
  hideNames: boolean;
  /** The session's hosts: their names, addresses and login names are what hiding replaces. */
  hosts: { name: string; hostname: string | null; user: string | null }[];
}

/** Keys whose values never leave the machine, whatever the export. */
const SECRET_KEYS = /^(password|passphrase|token|secret|identityFile|privateKey|apiKey)$/i;
const SECRET_TEXT: [RegExp, string][] = [
  // key=value and key: value forms of credentials in logs and command lines
  [
    /\b(password|passwd|passphrase|token|secret|api[_-]?key)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)/gi,
    '$1$2[redacted]',
  ],
  // private keys and their paths
  [
    /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
    '[private key redacted]',
  ],
  [/(?:~|\/[\w.-]+)*\/\.ssh\/[\w.-]+/g, '[key path]'],
];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Returns a copy with secrets removed everywhere (evidence included) and, when asked, host and
 * user names replaced by neutral labels (host-1, host-2…, "user") consistently across the document.
 */
export function redactReport(report: Report, opts: RedactOptions): Report {
  const names: [RegExp, string][] = [];
  if (opts.hideNames) {
    opts.hosts.forEach((h, i) => {
      const label = `host-${i + 1}`;
      for (const n of [h.name, h.hostname])
        if (n && n.length > 1)
          names.push([new RegExp(`(?<![\\w.-])${escapeRe(n)}(?![\\w-])`, 'g'), label]);
      if (h.user && h.user.length > 1) {
        names.push([new RegExp(`/home/${escapeRe(h.user)}\\b`, 'g'), '/home/user']);
        names.push([new RegExp(`(?<![\\w.-])${escapeRe(h.user)}(?=@)`, 'g'), 'user']);
        names.push([new RegExp(`(?<![\\w.-])${escapeRe(h.user)}(?![\\w-])`, 'g'), 'user']);
      }
    });
    // longest first, so a name that contains another is replaced whole
    names.sort((a, b) => b[0].source.length - a[0].source.length);
  }
  const text = (s: string) => {
    let out = s;
    for (const [re, to] of SECRET_TEXT) out = out.replace(re, to);
    for (const [re, to] of names) out = out.replace(re, to);
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (SECRET_KEYS.test(k)) continue;
        out[k] = walk(x);
      }
      return out;
    }
    return v;
  };
  return walk(report) as Report;
}
