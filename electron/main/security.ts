import { shell, type WebContents } from 'electron';

/** The only sites the app will hand to the system browser: documentation the UI links to. */
const EXTERNAL_ALLOW = new Set([
  'www.hiascend.com',
  'hiascend.com',
  'gitee.com',
  'github.com',
  'pytorch.org',
  'docs.pytorch.org',
]);

export function isAllowedExternal(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' && EXTERNAL_ALLOW.has(url.hostname);
  } catch {
    return false;
  }
}

/** The one place that opens links outside the app; everything else is refused. */
export function openExternalSafe(url: string): void {
  if (isAllowedExternal(url)) void shell.openExternal(url);
}

/** No navigation away from the app and no new windows, ever; allowed links go to the browser. */
export function lockDownNavigation(contents: WebContents, appOrigin: string): void {
  contents.on('will-navigate', (event, url) => {
    if (!url.startsWith(appOrigin)) {
      event.preventDefault();
      openExternalSafe(url);
    }
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    openExternalSafe(url);
    return { action: 'deny' };
  });
}
