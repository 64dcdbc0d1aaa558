import { useEffect, useState } from 'react';

export const PAGES = ['hosts', 'sessions', 'code', 'reports', 'doctor', 'settings'] as const;
export type Page = (typeof PAGES)[number];

export interface Route {
  page: Page;
  /** What follows the page, e.g. a host name in `#/hosts/npu-a`. */
  sub: string | null;
}

function fromHash(): Route {
  const [name = '', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const page = (PAGES as readonly string[]).includes(name) ? (name as Page) : 'hosts';
  const sub = rest.length ? decodeURIComponent(rest.join('/')) : null;
  return { page, sub };
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
