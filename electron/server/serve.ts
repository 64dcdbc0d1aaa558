import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { MAX_REQUEST_BYTES, RpcRequest, type RpcResponse } from '../../shared/api/wire';
import { AmwError, type WireError } from '../../shared/errors';
import { msg } from '../../shared/api/text';
import type { Core } from '../core/api/core';
import { rendererDistDir } from '../core/paths';
import {
  allowedOrigins,
  bearerToken,
  newHostLabel,
  newToken,
  requestToken,
  TOKEN_COOKIE,
  tokenMatches,
} from './auth';
import { CONTENT_SECURITY_POLICY } from './csp';
import { resolveStatic, sendFile, sendUnavailable } from './static';

export interface ServeOptions {
  port?: number;
  bind?: string;
  /** Binding to a non-loopback address must be asked for explicitly. */
  allowRemote?: boolean;
  /** Fixed token (tests); otherwise a random one. */
  token?: string;
  rendererDir?: string;
  /** Where warnings go (stderr in the CLI). */
  warn?: (line: string) => void;
  /**
   * On loopback, serve under a random `amw-….localhost` name so the token cookie reaches no
   * other local server (default). false: plain 127.0.0.1, for a browser that cannot resolve
   * *.localhost; the cookie is then named per port, and other servers on 127.0.0.1 receive it.
   */
  hostLabel?: boolean;
  /**
   * `/metrics` (Prometheus text format) behind the same token, given in `Authorization: Bearer`
   * or `?token=`; absent: `/metrics` is 404.
   */
  metrics?: { render(): Promise<string>; contentType: string };
}

export interface RunningServer {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
/** Hard cap at the socket layer; frames between MAX_REQUEST_BYTES and this get a typed error. */
const SOCKET_MAX_PAYLOAD = 16 * MAX_REQUEST_BYTES;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Serve mode: the built renderer over HTTP and the engine's contract over a WebSocket at /rpc,
 * both behind a random token. Bound to loopback unless told otherwise.
 */
export async function startServer(core: Core, opts: ServeOptions = {}): Promise<RunningServer> {
  const bind = opts.bind ?? '127.0.0.1';
  if (!LOOPBACK.has(bind) && !opts.allowRemote) {
    throw new AmwError('VALIDATION', msg('errors.text.bindRefused', { bind }), { bind });
  }
  const rendererDir = opts.rendererDir ?? rendererDistDir();
  const indexHtml = join(rendererDir, 'index.html');
  if (!existsSync(indexHtml)) {
    // not fatal: pages answer 503 (and retry) until the UI appears, as during a rebuild
    opts.warn?.(
      `warning: the UI is not built (${indexHtml} is missing); pages answer 503 until it is. Run: npm run build`,
    );
  }
  const token = opts.token ?? newToken();
  const appHost =
    LOOPBACK.has(bind) && opts.hostLabel !== false ? `${newHostLabel()}.localhost` : null;
  let port = 0;
  /** On the app's own host name the cookie is host-only; elsewhere it is named per port. */
  let cookieName = TOKEN_COOKIE;
  let origins = new Set<string>();
  let hostsAllowed = new Set<string>();

  const http = createServer((req, res) => {
    try {
      handleHttp(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });

  /** The request came to the app's own host name (always true without a host label). */
  const onAppHost = (req: IncomingMessage) =>
    appHost === null || (req.headers.host ?? '').toLowerCase() === `${appHost}:${port}`;

  /**
   * A redirect target on this server only: an absolute URL on the app's own origin, or a path
   * that starts with exactly one slash (`/.//evil.com/` parses to the path `//evil.com/`, which
   * a browser would read as another host).
   */
  const ownLocation = (pathname: string, search: string) => {
    const path = `/${pathname.replace(/^\/+/, '')}`;
    return `${appHost ? `http://${appHost}:${port}` : ''}${path}${search}`;
  };

  function handleHttp(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!hostAllowed(req)) {
      res
        .writeHead(421, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Misdirected request\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if (url.pathname === '/metrics') return serveMetrics(req, res, url);
    if (!tokenMatches(token, requestToken(req, url, onAppHost(req), cookieName))) {
      res
        .writeHead(401, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' })
        .end(
          'Unauthorized: open the URL that `amw serve` printed (it carries ?token=…).\n' +
            '未授权：请打开 `amw serve` 输出的带 ?token=… 的地址。\n',
        );
      return;
    }
    if (url.searchParams.has('token')) {
      if (!onAppHost(req)) {
        // opened as 127.0.0.1/localhost: carry the token over to the app's own host name,
        // which is where the cookie is set (never on 127.0.0.1, where every port would get it)
        res
          .writeHead(302, {
            ...SECURITY_HEADERS,
            Location: ownLocation(url.pathname, `?token=${encodeURIComponent(token)}`),
          })
          .end();
        return;
      }
      // Keep the token out of the address bar and history: cookie it and redirect.
      url.searchParams.delete('token');
      res
        .writeHead(302, {
          ...SECURITY_HEADERS,
          'Set-Cookie': `${cookieName}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
          Location: ownLocation(url.pathname, url.search),
        })
        .end();
      return;
    }
    const isRoute = url.pathname === '/' || !/\.[a-z0-9]+$/i.test(url.pathname);
    const file =
      resolveStatic(rendererDir, url.pathname === '/' ? '/index.html' : url.pathname) ??
      // client-side routes (no file extension) get the app shell
      (isRoute ? indexHtml : null);
    if (!file || !existsSync(file)) {
      // no UI at all (a rebuild empties dist/renderer first): 503, and the page retries
      if (!existsSync(indexHtml)) return sendUnavailable(res, SECURITY_HEADERS);
      res.writeHead(404, SECURITY_HEADERS).end();
      return;
    }
    sendFile(res, file, SECURITY_HEADERS);
  }

  /** A scrape: the token as a bearer header (or ?token=, answered in place: no cookie, no redirect). */
  function serveMetrics(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const text = { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' };
    if (
      !tokenMatches(token, bearerToken(req) ?? requestToken(req, url, onAppHost(req), cookieName))
    ) {
      res
        .writeHead(401, { ...text, 'WWW-Authenticate': 'Bearer realm="amw"' })
        .end('Unauthorized: send the serve token as Authorization: Bearer <token>.\n');
      return;
    }
    if (!opts.metrics) {
      res.writeHead(404, text).end();
      return;
    }
    const { metrics } = opts;
    metrics.render().then(
      (body) => {
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'Content-Type': metrics.contentType,
          'Cache-Control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => {
        if (!res.headersSent) res.writeHead(500, text).end();
      },
    );
  }

  /** Guards against DNS rebinding: a loopback server answers only to loopback names. */
  function hostAllowed(req: IncomingMessage): boolean {
    if (!LOOPBACK.has(bind)) return true;
    return hostsAllowed.has((req.headers.host ?? '').toLowerCase());
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: SOCKET_MAX_PAYLOAD });
  const sockets = new Set<WebSocket>();

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    if (url.pathname !== '/rpc') return refuse(404, 'Not Found');
    if (!hostAllowed(req)) return refuse(421, 'Misdirected Request');
    if (!tokenMatches(token, requestToken(req, url, onAppHost(req), cookieName)))
      return refuse(401, 'Unauthorized');
    const origin = req.headers.origin;
    // Browsers always send Origin on a WebSocket; a page from another site must not drive us.
    if (origin !== undefined && !origins.has(origin)) return refuse(403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws));
  });

  function onSocket(ws: WebSocket): void {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('error', () => ws.terminate());
    ws.on('message', (data: RawData, isBinary: boolean) => {
      void onMessage(ws, data, isBinary);
    });
  }

  async function onMessage(ws: WebSocket, data: RawData, isBinary: boolean): Promise<void> {
    const send = (msg: RpcResponse) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    const fail = (id: RpcResponse['id'], error: WireError) => send({ id, ok: false, error });
    const size = Array.isArray(data)
      ? data.reduce((n, b) => n + b.length, 0)
      : (data as Buffer | ArrayBuffer).byteLength;
    if (size > MAX_REQUEST_BYTES) {
      return fail(null, {
        code: 'PAYLOAD_TOO_LARGE',
        message: `Request of ${size} bytes is larger than the limit of ${MAX_REQUEST_BYTES} bytes.`,
        detail: { size, limit: MAX_REQUEST_BYTES },
      });
    }
    if (isBinary)
      return fail(null, { code: 'BAD_MESSAGE', message: 'Binary frames are not accepted.' });
    let json: unknown;
    try {
      json = JSON.parse(String(data));
    } catch {
      return fail(null, { code: 'BAD_MESSAGE', message: 'The message is not valid JSON.' });
    }
    const parsed = RpcRequest.safeParse(json);
    if (!parsed.success) {
      const id = (json as { id?: unknown } | null)?.id;
      return fail(typeof id === 'string' || typeof id === 'number' ? id : null, {
        code: 'BAD_MESSAGE',
        message: 'A request is {"id", "method", "input"}.',
        detail: { issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) },
      });
    }
    const result = await core.dispatch(parsed.data.method, parsed.data.input, { transport: 'ws' });
    send({ id: parsed.data.id, ...result });
  }

  const unsubscribe = core.bus.subscribe((event, payload) => {
    const frame = JSON.stringify({ event, payload });
    for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(frame);
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 0, bind, () => {
      http.off('error', reject);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  if (!appHost) cookieName = `${TOKEN_COOKIE}_${port}`;
  origins = allowedOrigins(bind, port);
  if (appHost) origins.add(`http://${appHost}:${port}`);
  hostsAllowed = new Set(
    ['127.0.0.1', 'localhost', '[::1]', bind, ...(appHost ? [appHost] : [])].map(
      (h) => `${h}:${port}`,
    ),
  );
  if (!LOOPBACK.has(bind)) {
    opts.warn?.(
      `warning: serving on ${bind}:${port}, reachable from other machines; anyone with the token can use this workbench.`,
    );
  }
  const shownHost = LOOPBACK.has(bind) || bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind;
  return {
    url: `http://${appHost ?? shownHost}:${port}/?token=${token}`,
    port,
    token,
    async close() {
      unsubscribe();
      for (const ws of sockets) ws.terminate();
      wss.close();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };
}
