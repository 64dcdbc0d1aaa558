import { request, type IncomingHttpHeaders } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { tempDir } from '../../tests/support/temp';
import { createCore, type Core } from '../core/api/core';
import { MAX_REQUEST_BYTES } from '../../shared/api/wire';
import { startServer, type RunningServer } from './serve';

let core: Core;
let server: RunningServer;

async function start(): Promise<RunningServer> {
  const dir = tempDir();
  const renderer = join(dir, 'renderer');
  mkdirSync(join(renderer, 'assets'), { recursive: true });
  writeFileSync(join(renderer, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(join(renderer, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'do not serve');
  core = createCore({ env: { AMW_HOME: join(dir, 'home') } as NodeJS.ProcessEnv });
  server = await startServer(core, { rendererDir: renderer });
  return server;
}

afterEach(async () => {
  await server?.close();
  await core?.close();
});

const base = () => `http://127.0.0.1:${server.port}`;

/** A WebSocket client that records every frame and can wait for one. */
function connect(headers: Record<string, string> = {}, query = `?token=${server.token}`) {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/rpc${query}`, {
    headers: { Origin: base(), ...headers },
  });
  const frames: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (d) => {
    frames.push(JSON.parse(String(d)) as Record<string, unknown>);
    waiters.splice(0).forEach((w) => w());
  });
  const next = (pred: (f: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const check = () => {
        const f = frames.find(pred);
        if (f) resolve(f);
        else waiters.push(check);
      };
      check();
    });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
  let id = 0;
  const call = async (method: string, input: unknown = {}) => {
    const myId = ++id;
    ws.send(JSON.stringify({ id: myId, method, input }));
    return next((f) => f.id === myId);
  };
  return { ws, opened, call, next, frames };
}

function rawGet(path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; headers: IncomingHttpHeaders }>(
    (resolve, reject) => {
      request({ host: '127.0.0.1', port: server.port, path, headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += String(c)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      })
        .on('error', reject)
        .end();
    },
  );
}

describe('HTTP', () => {
  it('answers 401 without the token, in both languages', async () => {
    await start();
    const res = await fetch(`${base()}/`);
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(text).toContain('Unauthorized');
    expect(text).toContain('未授权');
    expect((await fetch(`${base()}/?token=wrong`)).status).toBe(401);
    expect((await fetch(`${base()}/assets/app.js`)).status).toBe(401);
  });

  it('trades the token for an HttpOnly cookie and serves the app with a strict CSP', async () => {
    await start();
    // opened on 127.0.0.1: sent on to the app's own host name, with no cookie for 127.0.0.1
    const opened = await fetch(`${base()}/?token=${server.token}`, { redirect: 'manual' });
    expect(opened.status).toBe(302);
    expect(opened.headers.get('set-cookie')).toBeNull();
    const appUrl = new URL(opened.headers.get('location')!);
    expect(appUrl.hostname).toMatch(/^amw-[a-z0-9]+\.localhost$/);
    expect(server.url).toBe(`http://${appUrl.host}/?token=${server.token}`);
    const first = await rawGet(`/?token=${server.token}`, { Host: appUrl.host });
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe(`http://${appUrl.host}/`);
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const page = await rawGet('/', { Host: appUrl.host, cookie: cookie.split(';')[0]! });
    expect(page.status).toBe(200);
    expect(page.body).toContain('id="root"');
    // the same cookie presented on 127.0.0.1 is not accepted: it is never set there
    expect((await rawGet('/', { cookie: cookie.split(';')[0]! })).status).toBe(401);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src'))!;
    expect(scriptSrc).not.toContain('unsafe');
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('/metrics asks for the token before anything (bearer or ?token=), and is 404 when not served', async () => {
    await start();
    const none = await fetch(`${base()}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await fetch(`${base()}/metrics`, { headers: { Authorization: 'Bearer x' } });
    expect(wrong.status).toBe(401);
    // this server was started without metrics: known token, nothing to scrape
    const ok = await fetch(`${base()}/metrics`, {
      headers: { Authorization: `Bearer ${server.token}` },
      redirect: 'manual',
    });
    expect(ok.status).toBe(404);
  });

  it('never serves files outside the renderer folder', async () => {
    await start();
    const auth = `?token=${server.token}`;
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt']) {
      // raw request: fetch would normalise the dots away before they reach the server
      const res = await rawGet(`${path}${auth}`);
      expect(res.body, path).not.toContain('do not serve');
    }
    expect((await rawGet(`/assets/app.js${auth}`)).status).toBe(302);
  });

  it('answers only to loopback host names (DNS rebinding)', async () => {
    await start();
    const res = await rawGet(`/?token=${server.token}`, { Host: 'evil.example:80' });
    expect(res.status).toBe(421);
  });

  it('refuses a non-loopback bind unless asked explicitly', async () => {
    const dir = tempDir();
    core = createCore({ env: { AMW_HOME: dir } as NodeJS.ProcessEnv });
    await expect(startServer(core, { bind: '0.0.0.0', rendererDir: dir })).rejects.toMatchObject({
      code: 'VALIDATION',
    });
  });
});

describe('WebSocket /rpc', () => {
  it('refuses an upgrade without the token or from another origin', async () => {
    await start();
    await expect(connect({}, '').opened).rejects.toThrow('HTTP 401');
    await expect(connect({}, '?token=nope').opened).rejects.toThrow('HTTP 401');
    await expect(connect({ Origin: 'http://evil.example' }).opened).rejects.toThrow('HTTP 403');
    await expect(connect({ Origin: `http://127.0.0.1:${server.port + 1}` }).opened).rejects.toThrow(
      'HTTP 403',
    );
  });

  it('runs contract methods for the right origin', async () => {
    await start();
    const c = connect();
    await c.opened;
    const res = await c.call('app.info');
    expect(res).toMatchObject({ ok: true, value: { name: 'Ascend Migration Workbench' } });
    c.ws.close();
  });

  it('answers bad messages with typed errors and keeps the socket and server up', async () => {
    await start();
    const c = connect();
    await c.opened;
    c.ws.send('{not json');
    expect(await c.next((f) => f.ok === false)).toMatchObject({
      id: null,
      error: { code: 'BAD_MESSAGE' },
    });
    c.ws.send(JSON.stringify({ id: 5, nomethod: true }));
    expect(await c.next((f) => f.id === 5)).toMatchObject({ error: { code: 'BAD_MESSAGE' } });
    expect(await c.call('no.such')).toMatchObject({ ok: false, error: { code: 'UNKNOWN_METHOD' } });
    expect(await c.call('settings.set', { theme: 'pink' })).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION' },
    });
    c.ws.send(
      JSON.stringify({ id: 9, method: 'app.info', input: { pad: 'x'.repeat(MAX_REQUEST_BYTES) } }),
    );
    expect(
      await c.next((f) => (f.error as { code?: string })?.code === 'PAYLOAD_TOO_LARGE'),
    ).toMatchObject({
      ok: false,
    });
    // the same socket still works
    expect(await c.call('settings.get')).toMatchObject({ ok: true, value: { language: 'en' } });
    c.ws.close();
  });

  it('pushes job progress events to every connected client', async () => {
    await start();
    const a = connect();
    const b = connect();
    await Promise.all([a.opened, b.opened]);
    const started = (await a.call('maintenance.backup')) as { value: { jobId: string } };
    const done = (f: Record<string, unknown>) =>
      f.event === 'job.updated' &&
      (f.payload as { id: string; status: string }).id === started.value.jobId &&
      (f.payload as { status: string }).status === 'succeeded';
    await Promise.all([a.next(done), b.next(done)]);
    a.ws.close();
    b.ws.close();
  });
});
