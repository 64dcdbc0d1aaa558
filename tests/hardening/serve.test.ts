import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import { CHROMIUM_ARGS, chromiumPath } from '../../electron/core/reports/chromium';
import { startServer, type RunningServer } from '../../electron/server/serve';
import { tempDir } from '../support/temp';

let core: Core | undefined;
let server: RunningServer | undefined;
let other: Server | undefined;
let browser: Browser | undefined;

afterEach(async () => {
  await browser?.close();
  await server?.close();
  await core?.close();
  await new Promise((r) => (other ? other.close(r) : r(null)));
  browser = server = core = other = undefined;
});

function renderer(): string {
  const dir = tempDir();
  const r = join(dir, 'renderer');
  mkdirSync(join(r, 'assets'), { recursive: true });
  writeFileSync(join(r, 'index.html'), '<!doctype html><div id="root">app</div>');
  writeFileSync(join(r, 'assets', 'app.js'), 'console.log(1)');
  core = createCore({ env: { AMW_HOME: join(dir, 'home') } as NodeJS.ProcessEnv });
  return r;
}

function rawGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; headers: IncomingHttpHeaders }>(
    (resolve, reject) => {
      request({ host: '127.0.0.1', port, path, headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += String(c)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      })
        .on('error', reject)
        .end();
    },
  );
}

const chromiumOk = !!chromiumPath();

describe('serve mode: the token stays with the workbench (issue 17 item 5)', () => {
  it.skipIf(!chromiumOk)(
    'after opening the printed URL, Chromium sends the token to no other local server',
    async () => {
      const dir = renderer();
      server = await startServer(core!, { rendererDir: dir });
      // another server on this machine, on another port: it records every Cookie header
      const seen: string[] = [];
      other = createServer((req, res) => {
        seen.push(req.headers.cookie ?? '');
        res.end('other');
      });
      await new Promise<void>((r) => other!.listen(0, '127.0.0.1', r));
      const otherPort = (other.address() as AddressInfo).port;

      browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
      const page = await browser.newPage();
      await page.goto(server.url);
      await expect.poll(() => page.locator('#root').textContent()).toBe('app');
      expect(page.url()).not.toContain('token');
      // also when the user typed the 127.0.0.1 form of the address
      await page.goto(`http://127.0.0.1:${server.port}/?token=${server.token}`);
      await expect.poll(() => page.locator('#root').textContent()).toBe('app');
      const cookies = await page.context().cookies();
      expect(cookies.map((c) => c.domain)).toEqual([new URL(server.url).hostname]);

      for (const host of ['127.0.0.1', 'localhost']) {
        await page.goto(`http://${host}:${otherPort}/`);
        await expect.poll(() => page.locator('body').textContent()).toBe('other');
      }
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const c of seen) expect(c).not.toContain(server.token);
    },
    60_000,
  );

  it('two servers get different private host names (the label is not guessable)', async () => {
    const dir = renderer();
    server = await startServer(core!, { rendererDir: dir });
    const second = await startServer(core!, { rendererDir: dir });
    try {
      expect(new URL(server.url).hostname).not.toBe(new URL(second.url).hostname);
    } finally {
      await second.close();
    }
  });

  it('no open redirect: /.//evil.com/?token=T stays on the workbench', async () => {
    const dir = renderer();
    server = await startServer(core!, { rendererDir: dir });
    const app = new URL(server.url).host;
    for (const host of [app, `127.0.0.1:${server.port}`]) {
      for (const path of ['/.//evil.com/', '//evil.com/', '/%2F/evil.com/', '/./\\evil.com/']) {
        const res = await rawGet(server.port, `${path}?token=${server.token}`, { Host: host });
        expect(res.status, path).toBe(302);
        const target = new URL(res.headers.location!, `http://${host}`);
        expect(target.host, `${host}${path} → ${res.headers.location}`).toBe(app);
      }
    }
  });

  it('--no-host-label: the cookie is named per port (servers on other ports do not mix)', async () => {
    const dir = renderer();
    server = await startServer(core!, { rendererDir: dir, hostLabel: false });
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const res = await rawGet(server.port, `/?token=${server.token}`);
    expect(String(res.headers['set-cookie'])).toMatch(new RegExp(`^amw_token_${server.port}=`));
    expect(res.headers.location).toBe('/');
  });
});

describe('serve mode survives a rebuild (issue 16 item 5)', () => {
  it('a missing UI is a 503 page that retries; the server keeps answering', async () => {
    const dir = renderer();
    server = await startServer(core!, { rendererDir: dir });
    const host = new URL(server.url).host;
    const login = await rawGet(server.port, `/?token=${server.token}`, { Host: host });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const get = (path: string) => rawGet(server!.port, path, { Host: host, cookie });

    rmSync(dir, { recursive: true, force: true }); // what `vite build` does first
    for (const path of ['/', '/assets/app.js', '/hosts']) {
      const res = await get(path);
      expect(res.status, path).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.body).toContain('http-equiv="refresh"');
      expect(res.body).toContain('npm run build');
    }
    // a rebuild racing with requests: files appear and vanish under the server
    const churn = (async () => {
      for (let i = 0; i < 200; i++) {
        mkdirSync(join(dir, 'assets'), { recursive: true });
        writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root">app</div>');
        writeFileSync(join(dir, 'assets', 'app.js'), 'x'.repeat(100_000));
        rmSync(dir, { recursive: true, force: true });
        await new Promise((r) => setImmediate(r));
      }
    })();
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        get(i % 2 ? '/' : '/assets/app.js').then((r) => r.status),
      ),
    );
    await churn;
    expect(new Set(statuses.filter((s) => ![200, 404, 503].includes(s)))).toEqual(new Set());
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root">app</div>');
    expect((await get('/')).status).toBe(200);
  });

  it('starts with a warning, not a refusal, while the UI is not built yet', async () => {
    const dir = renderer();
    rmSync(dir, { recursive: true, force: true });
    const warnings: string[] = [];
    server = await startServer(core!, { rendererDir: dir, warn: (l) => warnings.push(l) });
    expect(warnings.join('\n')).toMatch(/pages answer 503 until it is/);
    const res = await rawGet(server.port, `/?token=${server.token}`, {
      Host: new URL(server.url).host,
    });
    expect(res.status).toBe(302);
  });
});
