import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { createApp } from '../../../src/api/app.js';
import type { Services } from '../../../src/app.js';
import type { Memory } from '../../../src/memory/memory.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Why the browser tests cannot run, or null. Only a missing Chromium skips them (CI installs it). */
export const SKIP_REASON = existsSync(CHROMIUM) ? null : `${CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium; .ci/run does)`;

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** screenshots of each main view land here (gitignored) */
export const ARTIFACTS = join(ROOT, 'test-artifacts', 'web');

/** Builds the inspector from web/ into `outDir` with the project's Vite config: the page under test is the current source. */
export async function buildInspector(outDir: string): Promise<void> {
  await build({ configFile: join(ROOT, 'web', 'vite.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
}

/** createApp on an ephemeral loopback port, serving the page built into `webRoot`. */
export async function serveApp(memory: Memory, services: Services, webRoot: string): Promise<{ base: string; close(): Promise<void> }> {
  const app = createApp({ memory, services, processMetrics: false, webRoot });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      (app.locals.close as () => void)();
    },
  };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** the host:port of every request the browser made */
  hosts: Set<string>;
  /** console errors and uncaught page errors */
  errors: string[];
  shot(name: string, page?: Page): Promise<string>;
  close(): Promise<void>;
}

/** Headless Debian Chromium with a fresh profile, no background traffic and no sandbox (containers). */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'nc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport: { width: 1360, height: 900 },
    timeout: 60_000,
  });
  context.setDefaultTimeout(10_000);
  const hosts = new Set<string>();
  const errors: string[] = [];
  const watch = (p: Page) => {
    p.on('request', (r) => {
      const url = new URL(r.url());
      if (url.protocol === 'http:' || url.protocol === 'https:') hosts.add(url.host);
    });
    p.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    p.on('pageerror', (e) => errors.push(e.message));
  };
  for (const p of context.pages()) watch(p);
  context.on('page', watch);
  const page = context.pages()[0] ?? (await context.newPage());
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    context,
    page,
    hosts,
    errors,
    async shot(name, p = page) {
      const path = join(ARTIFACTS, `${name}.png`);
      await p.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
