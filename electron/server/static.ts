import { createReadStream, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, relative, isAbsolute } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Resolves a URL path inside `root`, refusing anything that would step outside it (`..`, encoded
 * slashes, absolute paths). Returns null when there is no such regular file.
 */
export function resolveStatic(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = normalize(join(root, decoded));
  const rel = relative(root, file);
  if (rel.startsWith('..') || isAbsolute(rel)) return null;
  try {
    return statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

/**
 * Sends a file once it is open: a file removed between the lookup and the read (a rebuild
 * rewriting dist/) is a 503 that retries, never an unhandled stream error that ends the server.
 */
export function sendFile(res: ServerResponse, file: string, headers: Record<string, string>): void {
  const type = TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
  // Hashed asset names can be cached; index.html must always be fresh.
  const cache = file.includes(`${join('assets', '')}`)
    ? 'public, max-age=31536000, immutable'
    : 'no-cache';
  const stream = createReadStream(file);
  stream.once('open', () => {
    res.writeHead(200, { ...headers, 'Content-Type': type, 'Cache-Control': cache });
    stream.pipe(res);
  });
  stream.on('error', () => {
    if (!res.headersSent) sendUnavailable(res, headers);
    else res.destroy();
  });
  res.once('close', () => stream.destroy());
}

const UNAVAILABLE_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>Ascend Migration Workbench · 昇腾迁移工作台</title></head>
<body><p>The workbench UI is not available right now (it is being rebuilt, or dist/renderer is missing: npm run build). This page retries every 2 seconds.</p>
<p>界面暂不可用（正在重新构建，或缺少 dist/renderer：请运行 npm run build）。本页每 2 秒自动重试。</p></body></html>
`;

/** 503 with a page that reloads itself: the UI is missing or being rebuilt. */
export function sendUnavailable(res: ServerResponse, headers: Record<string, string>): void {
  res
    .writeHead(503, {
      ...headers,
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Retry-After': '2',
    })
    .end(UNAVAILABLE_PAGE);
}
