import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer is built once and served unchanged by Electron (app://) and by `amw serve`.
export default defineConfig({
  root: 'renderer',
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    // No inline scripts or styles: the CSP is `script-src 'self'; style-src 'self'`.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'chrome120',
    // one local app, loaded from disk or loopback: a big chunk costs nothing over the network
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      // zod's sources carry comments Rollup cannot place; harmless, so not worth a warning each build
      onwarn(warning, warn) {
        if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
      },
    },
  },
});
