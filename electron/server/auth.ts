import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const TOKEN_COOKIE = 'amw_token';

export const newToken = (): string => randomBytes(24).toString('base64url');

/** Constant-time comparison so the token cannot be guessed byte by byte from response times. */
export function tokenMatches(expected: string, given: string | null | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function cookieToken(req: IncomingMessage): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === TOKEN_COOKIE) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/** The token a request carries: `?token=` first, then the cookie set on the first page load. */
export function requestToken(req: IncomingMessage, url: URL): string | null {
  return url.searchParams.get('token') ?? cookieToken(req);
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
