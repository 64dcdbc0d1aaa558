import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

// Monaco's package exports map every subpath to `.js`: its stylesheets are reached through this.
const monacoEsm = dirname(createRequire(import.meta.url).resolve('monaco-editor/editor/editor.api'))
  .split('/')
  .slice(0, -1)
  .join('/');

// The renderer is built once and served unchanged by Electron (app://) and by `amw serve`.
export default defineConfig({
  root: 'renderer',
  base: '/',
  plugins: [react()],
  resolve: { alias: { '@monaco-esm': monacoEsm } },
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    // No inline scripts or styles: the CSP is `script-src 'self'; style-src 'self'`.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'chrome120',
    // one local app, loaded from disk or loopback: a big chunk costs nothing over the network
    chunkSizeWarningLimit: 3000,
    rollupOptions: {
      // zod's sources carry comments Rollup cannot place; harmless, so not worth a warning each build
      onwarn(warning, warn) {
        if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
      },
    },
  },
});
