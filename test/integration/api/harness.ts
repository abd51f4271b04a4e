import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Services, WireOptions } from '../../../src/app.js';
import { createApi } from '../../../src/api/app.js';
import type { Memory } from '../../../src/memory/memory.js';
import { testMemory } from '../../helpers/services.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** the parsed body when it is JSON */
  json: any;
}

export interface RequestOptions {
  body?: unknown;
  /** sent as is, with no JSON encoding (malformed bodies) */
  raw?: string | Buffer;
  key?: string;
  headers?: Record<string, string>;
}

export interface Api {
  /** the Express app (behind the hot routes unless `expressOnly`) */
  app: Express;
  memory: Memory;
  services: Services;
  base: string;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * A full service on a temp SQLite file, served as `serve` serves it (the hot routes in front of the
 * Express app; `expressOnly`: the Express app alone) on an ephemeral loopback port.
 */
export async function startApi(config: Record<string, unknown> = {}, options: WireOptions & { expressOnly?: boolean } = {}): Promise<Api> {
  const { expressOnly, ...wireOptions } = options;
  const { memory, services } = await testMemory(config, wireOptions);
  const api = createApi({ memory, services, processMetrics: false });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(expressOnly ? api.app : api.listener);
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    app: api.app,
    memory,
    services,
    base,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}) };
      let body: string | Buffer | undefined;
      if (o.raw !== undefined) body = o.raw;
      else if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(base + path, { method, headers: { ...headers, ...o.headers }, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      api.close();
      await services.close();
    },
  };
}

/**
 * A digest of everything stored (turn log, long-term entries, vectors, and the short-term sessions of
 * the given users): equal before and after a refused request means nothing was written, edited or
 * deleted. Waits for queued jobs first, so that earlier writes have settled.
 */
export async function storeDigest(api: Api, users: readonly string[] = ['default']): Promise<string> {
  await api.memory.idle();
  const { db, shortTerm } = api.services;
  const shortTermState: unknown[] = [];
  for (const u of users) {
    for (const s of (await shortTerm.sessions(u)).sort()) shortTermState.push([u, s, (await shortTerm.recent(u, s)).map((t) => [t.id, t.content])]);
  }
  const turns = db!.prepare('SELECT id, user_id, session_id, content, importance, pinned FROM turns ORDER BY user_id, id').all() as Array<{ id: string; user_id: string }>;
  const embedder = await api.services.embedders.ready();
  const state = {
    turns,
    entries: db!.prepare('SELECT id, user_id, session_id, content, importance, pinned, updated_at FROM entries ORDER BY user_id, id').all(),
    // through the tier's interface: which turns hold a vector, and how many vectors there are
    vectors: [await api.services.vectors.count(), embedder ? (await Promise.all(turns.map(async (t) => ((await api.services.vectors.has(embedder, t.user_id, [t.id])).size > 0 ? `${t.user_id}/${t.id}` : null)))).filter(Boolean).sort() : []],
    shortTerm: shortTermState,
  };
  return createHash('sha256').update(JSON.stringify(state)).digest('hex');
}

export async function counts(api: Api): Promise<{ turns: number; entries: number; vectors: number }> {
  await api.memory.idle();
  return {
    turns: (await api.services.turnLog.counts()).total,
    entries: await api.services.longTerm.count(),
    vectors: await api.services.vectors.count(),
  };
}

/** A turn body the write path accepts, important enough to reach the long-term store. */
export function turn(content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { role: 'user', content, importance: 0.9, ...extra };
}
