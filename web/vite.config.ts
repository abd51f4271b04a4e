import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The memory inspector: plain TypeScript modules and one stylesheet, bundled into dist/web, which
 * `neuralcleave serve` serves at `/` (src/api/static.ts). `npm install` builds it through `prepare`.
 * Asset URLs are relative, so the page works wherever it is mounted; nothing is fetched from another host.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: 'public',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // an inlined asset would become a data: URL; keep every asset a file of its own
    assetsInlineLimit: 0,
    // the modulepreload polyfill is an inline-free module, but the page has one entry and no dynamic imports
    modulePreload: { polyfill: false },
  },
  server: { host: '127.0.0.1' },
});
