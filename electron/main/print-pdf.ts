import { BrowserWindow } from 'electron';

/**
 * Report PDF in the desktop app: Electron's own printToPDF on a hidden, sandboxed window that runs
 * no script and may load nothing (the report HTML is self-contained).
 */
export async function printToPdf(html: string): Promise<Buffer> {
  const win = new BrowserWindow({
    show: false,
    // its own in-memory session: the request filter below must not touch the app window's
    webPreferences: {
      sandbox: true,
      javascript: false,
      contextIsolation: true,
      partition: 'amw-pdf',
    },
  });
  win.webContents.session.webRequest.onBeforeRequest((details, done) =>
    done({ cancel: !details.url.startsWith('data:') }),
  );
  try {
    await win.loadURL(`data:text/html;charset=utf-8,${encodeURIComponent(html)}`);
    return await win.webContents.printToPDF({ printBackground: true, pageSize: 'A4' });
  } finally {
    win.destroy();
  }
}
