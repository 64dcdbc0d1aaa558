import { useEffect, useState } from 'react';

export const PAGES = ['hosts', 'sessions', 'code', 'reports', 'doctor', 'settings'] as const;
export type Page = (typeof PAGES)[number];

export interface Route {
  page: Page;
  /** What follows the page, e.g. a host name in `#/hosts/npu-a`. */
  sub: string | null;
}

/** A link inside the app: `#/page/…`, built only by `href` below. */
export type Href = `#/${Page}${string}`;

const seg = (s: string | number) => encodeURIComponent(String(s));
/** A path keeps its slashes; each of its parts is encoded. */
const path = (p: string) => p.split('/').map(seg).join('/');

/**
 * Every route of the app, typed. The hash forms are stable (they are bookmarked and reloaded):
 * `#/hosts/NAME`, `#/sessions/ID/STAGE`, `#/code/SCAN/FILE@LINE`, `#/reports`, `#/settings`.
 */
export const href = {
  page: (page: Page): Href => `#/${page}`,
  host: (name: string | null): Href => (name ? `#/hosts/${seg(name)}` : '#/hosts'),
  /** A session, on one of its stages (the first built one when none is named). */
  session: (id: number | null, stage?: string | null): Href =>
    id === null ? '#/sessions' : `#/sessions/${id}${stage ? `/${seg(stage)}` : ''}`,
  /** The Code page's scan form, with a session chosen for the scan to belong to. */
  scanFor: (sessionId: number): Href => `#/code/for-session/${sessionId}`,
  /** A code scan's review, optionally at a file and line. */
  scan: (scanId: number | null, file?: string | null, line?: number | null): Href =>
    scanId === null
      ? '#/code'
      : `#/code/${scanId}${file ? `/${path(file)}${line ? `@${line}` : ''}` : ''}`,
};

/** `#/sessions/ID/STAGE`: the session and the stage shown (null: the first built one). */
export interface SessionRoute {
  id: number;
  stage: string | null;
}

export function parseSessionRoute(sub: string | null): SessionRoute | null {
  if (!sub) return null;
  const [id = '', stage = ''] = sub.split('/');
  const n = Number(id);
  if (!Number.isInteger(n) || n <= 0) return null;
  return { id: n, stage: stage || null };
}

/** `#/code/for-session/ID`: the session a new scan is for (null: none named). */
export function parseScanFor(sub: string | null): number | null {
  const m = /^for-session\/(\d+)$/.exec(sub ?? '');
  return m ? Number(m[1]) : null;
}

/** `#/code/SCAN/FILE@LINE`: a scan, and the file and line to open in it. */
export interface CodeRoute {
  scanId: number;
  file: string | null;
  line: number | null;
}

export function parseCodeRoute(sub: string | null): CodeRoute | null {
  if (!sub) return null;
  const [id = '', ...rest] = sub.split('/');
  const scanId = Number(id);
  if (!Number.isInteger(scanId) || scanId <= 0) return null;
  const target = rest.join('/');
  // only a trailing `@digits` is a line: a file may have `@` in its name (`model@v2.py`)
  const at = /@(\d+)$/.exec(target);
  return {
    scanId,
    file: target ? (at ? target.slice(0, at.index) || null : target) : null,
    line: at ? Number(at[1]) || null : null,
  };
}

function fromHash(): Route {
  const [name = '', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const page = (PAGES as readonly string[]).includes(name) ? (name as Page) : 'hosts';
  const sub = rest.length ? rest.map((s) => decodeURIComponent(s)).join('/') : null;
  return { page, sub: sub || null };
}

/** Goes to a route: one history entry, so Back returns where the user was. */
export function navigate(to: Href): void {
  if (location.hash !== to) location.hash = to;
}

/** Hash routing: works the same under app:// in Electron and http:// in serve mode. */
export function useRoute(): [Route, (page: Page, sub?: string | null) => void] {
  const [route, setRoute] = useState<Route>(fromHash);
  useEffect(() => {
    const onHash = () => setRoute(fromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return [
    route,
    (page, sub) => (location.hash = `#/${page}${sub ? `/${encodeURIComponent(sub)}` : ''}`),
  ];
}
