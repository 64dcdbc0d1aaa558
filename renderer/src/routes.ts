import { useEffect, useState } from 'react';

export const PAGES = ['hosts', 'sessions', 'code', 'reports', 'settings'] as const;
export type Page = (typeof PAGES)[number];

function fromHash(): Page {
  const name = location.hash.replace(/^#\/?/, '');
  return (PAGES as readonly string[]).includes(name) ? (name as Page) : 'hosts';
}

/** Hash routing: works the same under app:// in Electron and http:// in serve mode. */
export function usePage(): [Page, (p: Page) => void] {
  const [page, setPage] = useState<Page>(fromHash);
  useEffect(() => {
    const onHash = () => setPage(fromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return [page, (p) => (location.hash = `#/${p}`)];
}
