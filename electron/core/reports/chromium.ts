import { existsSync } from 'node:fs';

/** Debian's Chromium: Playwright cannot download its own browser on these machines. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.AMW_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

/** Flags that keep Chromium from reaching out to a network it does not have. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
