/**
 * The renderer's Content-Security-Policy, shared by the Electron window and serve mode.
 * Nothing remote: scripts, styles, fonts and workers all come from the app itself. Styles allow
 * 'unsafe-inline' because xterm.js and Monaco inject <style> elements at run time (VS Code's own
 * policy does the same); scripts stay strictly 'self'.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
