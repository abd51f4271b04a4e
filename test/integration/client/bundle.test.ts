import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { build, type Rollup } from 'vite';
import { startApi, type Api } from '../api/harness.js';
import { tmpDir } from '../../helpers/tmp.js';
import { launchBrowser, SKIP_REASON, type Browser } from '../web/browser.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** the file `neuralcleave-memory/client` resolves to (package.json "exports") */
const ENTRY = fileURLToPath(new URL('../../../dist/src/client/index.js', import.meta.url));
const KEY = 'bundle-alice-key-00000000000';

/** Bundles the published client entry for the browser with Vite; returns the code and every module it took in. */
async function bundleClient(): Promise<{ code: string; modules: string[]; imports: string[] }> {
  const modules: string[] = [];
  const out = (await build({
    configFile: false,
    logLevel: 'silent',
    root: dirname(ENTRY),
    plugins: [{ name: 'record-modules', load: (id) => void modules.push(id) }],
    build: { write: false, minify: false, lib: { entry: ENTRY, formats: ['es'], fileName: 'client' } },
  })) as Rollup.RollupOutput[];
  const chunk = out[0]!.output.find((o): o is Rollup.OutputChunk => o.type === 'chunk')!;
  return { code: chunk.code, modules, imports: [...chunk.imports, ...chunk.dynamicImports] };
}

describe('neuralcleave-memory/client in a browser bundle', () => {
  let bundle: Awaited<ReturnType<typeof bundleClient>>;
  before(async () => {
    assert.ok(existsSync(ENTRY), `${ENTRY} is missing: run \`npm run build\``);
    bundle = await bundleClient();
  });

  test('takes in only the client’s own modules: nothing of the server, no node: import, no Node global', () => {
    const files = bundle.modules.map((m) => relative(ROOT, m)).sort();
    // types.js is types only: nothing of it is imported at run time
    assert.deepEqual(files, ['dist/src/client/client.js', 'dist/src/client/errors.js', 'dist/src/client/index.js']);
    assert.deepEqual(bundle.imports, [], 'nothing left external');
    assert.doesNotMatch(bundle.code, /\bnode:|\brequire\(|\bprocess\.|\bBuffer\b|__vite-browser-external/);
    assert.match(bundle.code, /class MemoryClient/);
  });

  test('the bundle itself works: loaded as a module file, it talks to a real server', async () => {
    const api = await startApi({ api_keys: [{ key: KEY, users: ['alice'] }] });
    try {
      const file = join(tmpDir(), 'client.mjs');
      writeFileSync(file, bundle.code);
      const m = (await import(pathToFileURL(file).href)) as typeof import('../../../src/client/index.js');
      const client = new m.MemoryClient({ baseUrl: api.base, apiKey: KEY, retries: 0 });
      const written = await client.addTurns('bundle-s', { role: 'user', content: 'I keep my passport in the desk drawer.' });
      const found = await client.retrieve({ query: 'passport', session_id: 'bundle-s' });
      assert.deepEqual(found.results.map((r) => r.id), written.ids);
      const missing = await client.get('no-such-id').catch((e: unknown) => e);
      assert.ok(missing instanceof m.NotFoundError);
    } finally {
      await api.close();
    }
  });

  describe('runs in Chromium against a real server', { skip: SKIP_REASON ?? false }, () => {
    let api: Api;
    let browser: Browser;
    before(async () => {
      api = await startApi({ api_keys: [{ key: KEY, users: ['alice'] }] });
      browser = await launchBrowser();
      // the page and the bundle are served at the API's own origin, so the client's fetch is same-origin
      await browser.page.route(`${api.base}/__test/**`, (route) => {
        const path = new URL(route.request().url()).pathname;
        if (path.endsWith('.js')) return route.fulfill({ contentType: 'text/javascript', body: bundle.code });
        return route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>client</title><p>client test</p>' });
      });
      await browser.page.goto(`${api.base}/__test/index.html`);
    });
    after(async () => {
      await browser?.close();
      await api?.close();
    });

    test('addTurns, retrieve and a typed NotFoundError, from a page', async () => {
      const result = await browser.page.evaluate(
        async ({ key, entry, baseUrl }) => {
          const m = await import(entry);
          const client = new m.MemoryClient({ baseUrl, apiKey: key, retries: 0 });
          const written = await client.addTurns('browser-s', { role: 'user', content: 'I water the fern every Sunday.' });
          const found = await client.retrieve({ query: 'fern', session_id: 'browser-s' });
          const missing = await client.get('no-such-id').catch((e: unknown) => e);
          return {
            ids: written.ids as string[],
            contents: (found.results as Array<{ content: string }>).map((r) => r.content),
            missing: { isNotFound: missing instanceof m.NotFoundError, code: (missing as { code: string }).code, status: (missing as { status: number }).status },
          };
        },
        { key: KEY, entry: `${api.base}/__test/client.js`, baseUrl: api.base },
      );
      assert.equal(result.ids.length, 1);
      assert.match(result.ids[0]!, /^[0-9a-f-]{36}$/, 'crypto.randomUUID of the page gave the id');
      assert.deepEqual(result.contents, ['I water the fern every Sunday.']);
      assert.deepEqual(result.missing, { isNotFound: true, code: 'not_found', status: 404 });
      // Chromium logs every 4xx answer to the console; the 404 asked for above is the only one allowed
      assert.deepEqual(browser.errors.filter((e) => !/Failed to load resource: .*\b404\b/.test(e)), []);
      assert.equal(await api.memory.exists('alice', result.ids[0]!), true, "the page's turn is alice's");
    });
  });
});
