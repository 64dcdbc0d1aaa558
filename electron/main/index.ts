// Electron entry. Thin on purpose: window, menu, dialogs and IPC wiring. Everything the app does
// lives in electron/core, which never imports electron.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, net, protocol, safeStorage } from 'electron';
import { explainError, translator } from '../../shared/i18n';
import { toWireError } from '../../shared/errors';
import { createCore, type Core } from '../core/api/core';
import { appRoot, PRODUCT_NAME, rendererDistDir } from '../core/paths';
import { resolveStatic } from '../server/static';
import { CONTENT_SECURITY_POLICY } from '../server/csp';
import { installMenu } from './menu';
import { printToPdf } from './print-pdf';
import { lockDownNavigation } from './security';
import { readReportFile, reportPathsFrom } from './open-report';

const APP_ORIGIN = 'app://workbench';

app.setName(PRODUCT_NAME);
protocol.registerSchemesAsPrivileged([
  { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);

let core: Core | undefined;

function openCore(): Core | undefined {
  try {
    return createCore({
      home: app.getPath('userData'),
      nativeBinding: process.env.AMW_SQLITE_BINDING || undefined,
      // the OS keychain encrypts remembered passwords; without one, none are remembered
      secretCipher: safeStorage.isEncryptionAvailable()
        ? {
            encrypt: (plain) => safeStorage.encryptString(plain),
            decrypt: (buf) => safeStorage.decryptString(buf),
          }
        : undefined,
      printPdf: printToPdf,
    });
  } catch (err) {
    // A database from a newer version, a corrupt or unwritable file: say which file and why,
    // then quit — never a crash loop.
    const t = translator(app.getLocale().startsWith('zh') ? 'zh-CN' : 'en');
    dialog.showErrorBox(t('app.name'), explainError(t, toWireError(err)));
    app.exit(2);
    return undefined;
  }
}

function serveRenderer(): void {
  const root = rendererDistDir();
  protocol.handle('app', async (request) => {
    const url = new URL(request.url);
    const file =
      resolveStatic(root, url.pathname === '/' ? '/index.html' : url.pathname) ??
      (/\.[a-z0-9]+$/i.test(url.pathname) ? null : join(root, 'index.html'));
    if (!file) return new Response('Not found', { status: 404 });
    const res = await net.fetch(pathToFileURL(file).href);
    const headers = new Headers(res.headers);
    headers.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    headers.set('X-Content-Type-Options', 'nosniff');
    return new Response(res.body, { status: res.status, headers });
  });
}

function createWindow(c: Core): void {
  const win = new BrowserWindow({
    width: 1360,
    height: 860,
    minWidth: 960,
    minHeight: 600,
    title: PRODUCT_NAME,
    icon: join(appRoot(), 'resources', 'icons', 'icon.png'),
    show: false,
    webPreferences: {
      preload: join(appRoot(), 'dist', 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  lockDownNavigation(win.webContents, APP_ORIGIN);
  const off = c.bus.subscribe((event, payload) => {
    if (!win.isDestroyed()) win.webContents.send('amw:event', event, payload);
  });
  win.on('closed', off);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(`${APP_ORIGIN}/`);
}

// A double-clicked `.amw.json` report: macOS sends open-file (possibly before ready), Windows and
// Linux start the app — or a second instance, which hands its argv over — with the path.
const pendingReports: string[] = reportPathsFrom(process.argv.slice(1));
let openReports: (paths: string[]) => void = (paths) => pendingReports.push(...paths);
app.on('open-file', (event, path) => {
  event.preventDefault();
  openReports([path]);
});
if (!app.requestSingleInstanceLock()) app.quit();
app.on('second-instance', (_event, argv, cwd) => openReports(reportPathsFrom(argv.slice(1), cwd)));

void app.whenReady().then(async () => {
  core = openCore();
  if (!core) return;
  const c = core;
  const settings = await c.call('settings.get', {});
  installMenu(translator(settings.language));
  c.on('settings.changed', (s) => installMenu(translator(s.language)));
  ipcMain.handle('amw:call', (event, method: unknown, input: unknown) => {
    // Only our own page may call in; input is validated against the contract inside dispatch.
    if (!event.senderFrame?.url.startsWith(APP_ORIGIN)) {
      return { ok: false, error: { code: 'UNAUTHORIZED', message: 'Caller is not the app.' } };
    }
    return c.dispatch(method, input, { transport: 'ipc' });
  });
  serveRenderer();
  createWindow(c);
  openReports = (paths) => {
    for (const path of paths) {
      const json = readReportFile(path);
      if (json === null) continue;
      void c.call('reports.import', { json }, { transport: 'ipc' }).then(
        () =>
          BrowserWindow.getAllWindows()[0]?.webContents.executeJavaScript(
            "location.hash='#/reports'",
          ),
        (err: unknown) =>
          dialog.showErrorBox(
            PRODUCT_NAME,
            explainError(translator(settings.language), toWireError(err), settings.language),
          ),
      );
    }
  };
  openReports(pendingReports.splice(0));
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow(c);
  });
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

app.on('will-quit', () => {
  void core?.close();
});
