import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const TOKEN_COOKIE = 'amw_token';

export const newToken = (): string => randomBytes(24).toString('base64url');

/**
 * Browsers send a cookie to every port of the host it was set for. So on loopback the app is
 * served under a host name of its own, `amw-<label>.localhost` (browsers resolve *.localhost to
 * loopback without DNS): the cookie is host-only for that name, which no other local server is
 * ever asked for unless it knows the random label. A server on 127.0.0.1:other never sees it.
 */
export const newHostLabel = (): string =>
  `amw-${randomBytes(10)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')}`;

/** Constant-time comparison so the token cannot be guessed byte by byte from response times. */
export function tokenMatches(expected: string, given: string | null | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function cookieToken(req: IncomingMessage, name = TOKEN_COOKIE): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) {
      try {
        return decodeURIComponent(rest.join('='));
      } catch {
        return null;
      }
    }
  }
  return null;
}

/**
 * The token in `Authorization: Bearer …`: how a Prometheus scrape carries it (`authorization:
 * {credentials_file: …}`), since a scraper keeps no cookie and follows no login redirect.
 */
export function bearerToken(req: IncomingMessage): string | null {
  const m = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}

/**
 * The token a request carries: `?token=` first, then the cookie set on the first page load —
 * the cookie only when `cookieAllowed` (the request came to the app's own host name).
 */
export function requestToken(
  req: IncomingMessage,
  url: URL,
  cookieAllowed = true,
  cookieName = TOKEN_COOKIE,
): string | null {
  return url.searchParams.get('token') ?? (cookieAllowed ? cookieToken(req, cookieName) : null);
}

/**
 * The origins a browser may open the socket from: the server's own, under each name it answers
 * to. Anything else is a page on another site trying to drive the engine.
 */
export function allowedOrigins(bind: string, port: number): Set<string> {
  const hosts = new Set([bind, '127.0.0.1', 'localhost', '[::1]']);
  if (bind === '0.0.0.0' || bind === '::') hosts.delete(bind);
  return new Set(
    [...hosts].map((h) => `http://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`),
  );
}
