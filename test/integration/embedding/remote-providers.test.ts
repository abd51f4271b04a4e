// The ollama and openai embedding providers against embedding servers of the test's own (loopback,
// node:http, each speaking its real wire format: test/fixtures/fake-embedding-server.ts), through the
// whole service: turns ingested on the in-process queue, vectors in the embedded index of a real
// SQLite file, retrieval. One suite runs against each wire.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { loadEmbedder } from '../../../src/embedding/load.js';
import { healthReport, publicHealth } from '../../../src/health.js';
import { startFakeEmbeddingServer, type FakeEmbeddingServer, type Wire } from '../../fixtures/fake-embedding-server.js';
import { testMemory } from '../../helpers/services.js';
import { until } from '../../helpers/until.js';

function capturingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const records = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string });
  return { logger, lines, records };
}

const turns = (n: number, session: string, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ user_id: 'u1', session_id: session, role: 'user' as const, content: `note ${from + i}: my sister ${['hikes', 'paints', 'sails', 'cooks'][(from + i) % 4]} every weekend in town ${from + i}` }));

/** the texts a server answered, probes left out */
const answeredTexts = (s: FakeEmbeddingServer) => s.answered.filter((t) => !/probe$/.test(t));

const MODEL: Record<Wire, string> = { ollama: 'nomic-embed-text', openai: 'text-embedding-3-small' };

function config(wire: Wire, server: FakeEmbeddingServer, extra: Record<string, unknown> = {}) {
  return { embedding_provider: wire, embedding_model: MODEL[wire], embedding_url: server.url, embedding_retries: 1, embedding_timeout_ms: 2000, ...extra };
}

for (const wire of ['ollama', 'openai'] as const) {
  describe(`embedding_provider = "${wire}" against a fake ${wire} server`, () => {
    const servers: FakeEmbeddingServer[] = [];
    const serve = async (o: { dim?: number; apiKey?: string } = {}) => {
      const s = await startFakeEmbeddingServer({ wire, models: [MODEL[wire]], ...o });
      servers.push(s);
      return s;
    };
    after(() => Promise.all(servers.map((s) => s.close())));

    it('embeds ingested turns in batches and retrieves them by meaning through the server', async () => {
      const server = await serve();
      const { memory, services } = await testMemory(config(wire, server, { embedding_batch_size: 8 }));
      try {
        const ready = await memory.ready();
        assert.equal(ready.embedder.status, 'ready', JSON.stringify(ready));
        const embedder = services.embedders.current()!;
        assert.match(embedder.id, new RegExp(`^${wire}:${MODEL[wire]}@64`));
        await memory.addTurns(turns(40, 's1'));
        await memory.idle();
        assert.equal(await services.vectors.count(embedder), 40);
        const batches = server.requests.filter((r) => r.status === 200 && !r.texts[0]!.endsWith('probe'));
        assert.ok(batches.every((r) => r.texts.length <= 8), `batches of at most embedding_batch_size: ${batches.map((r) => r.texts.length)}`);
        assert.ok(batches.some((r) => r.texts.length > 1), 'several texts in one request');
        assert.ok(batches.length < 40, `${batches.length} requests for 40 turns`);
        assert.equal(server.requests[0]!.body.model, MODEL[wire]);

        const before = server.requests.length;
        const r = await memory.retrieve({ query: 'who sails on the weekend', user_id: 'u1', session_id: 'another', top_k: 4 });
        // the semantic tier found them (the results name the tier of highest priority holding each text)
        assert.equal(r.tiers.semantic.status, 'ok');
        assert.ok(r.tiers.semantic.count > 0, JSON.stringify(r.tiers));
        assert.match(r.results[0]!.content, /sails/);
        const query = server.requests.slice(before).find((q) => q.texts.some((t) => t.includes('sails')));
        assert.ok(query, 'the query went to the server');
        if (wire === 'ollama') {
          // nomic-embed-text is asked as its model card says
          assert.deepEqual(query.texts, ['search_query: who sails on the weekend']);
          assert.ok(batches.every((b) => b.texts.every((t) => t.startsWith('search_document: note '))));
        } else {
          assert.deepEqual(query.texts, ['who sails on the weekend']);
          assert.equal(query.body.encoding_format, 'float');
        }
      } finally {
        await memory.close();
      }
    });

    it('retries a 429 (after its Retry-After) and a 503, then succeeds with the same texts', async () => {
      const server = await serve();
      const embedder = await loadEmbedder({ model_cache_dir: '', embedding_load_timeout_ms: 1000, model_dir: undefined, ...config(wire, server, { embedding_retries: 3 }) });
      try {
        server.failNext(1, 429, 1);
        server.failNext(1, 503);
        const started = Date.now();
        const vectors = await embedder.embed(['alpha text', 'beta text']);
        assert.equal(vectors.length, 2);
        assert.ok(Date.now() - started >= 900, 'waited for Retry-After: 1');
        // (nomic-embed-text's stored texts carry its document prefix)
        const statuses = server.requests.slice(1).map((r) => [r.status, r.texts.map((t) => t.replace(/^search_document: /, '')).join('|')]);
        assert.deepEqual(statuses, [
          [429, 'alpha text|beta text'],
          [503, 'alpha text|beta text'],
          [200, 'alpha text|beta text'],
        ]);
        // one more failure than retries: the caller hears why, with the server named
        server.failNext(4, 503);
        await assert.rejects(embedder.embed(['gamma']), (err: Error) => err.name === 'EmbedderUnavailableError' && /HTTP 503/.test(err.message) && err.message.includes(server.url));
      } finally {
        await embedder.close();
      }
    });

    it('loses nothing and embeds nothing twice when the server dies mid-ingest and comes back, with one warning', async () => {
      const server = await serve();
      const { logger, records } = capturingLogger();
      const { memory, services } = await testMemory(config(wire, server, { embedding_retries: 0, embedding_batch_size: 4 }), { logger });
      try {
        await memory.ready();
        const embedder = services.embedders.current()!;
        await memory.addTurns(turns(20, 's1'));
        await memory.idle();
        assert.equal(await services.vectors.count(embedder), 20);

        await server.stop();
        await memory.addTurns(turns(20, 's1', 20));
        await until('the outage noticed', () => services.embedders.status === 'unavailable', 5000, 20);
        // meanwhile retrieval goes on without the semantic tier, and health names the provider and its state
        const r = await memory.retrieve({ query: 'who paints', user_id: 'u1', session_id: 's1', top_k: 4 });
        assert.equal(r.tiers.semantic.status, 'skipped');
        const health = publicHealth(await healthReport(services));
        assert.equal(health.embedder.provider, wire);
        assert.equal(health.embedder.status, 'unavailable');
        assert.equal(health.backends.embedder!.state, 'down');
        await new Promise((res) => setTimeout(res, 300));
        await server.restart();

        await until('every turn embedded', async () => (await services.turnLog.counts()).pending_embed === 0, 20_000, 100);
        await memory.idle();
        assert.equal(services.embedders.status, 'ready');
        assert.equal(await services.vectors.count(embedder), 40);
        const texts = answeredTexts(server);
        assert.equal(new Set(texts).size, texts.length, 'no text embedded twice');
        assert.equal(texts.length, 40);
        const warnings = records().filter((x) => x.level === 40 && /embedding server does not answer/.test(x.msg));
        assert.equal(warnings.length, 1, 'one warning for the outage');
        assert.ok(records().some((x) => /answers again/.test(x.msg)));
      } finally {
        await memory.close();
      }
    });

    it('starts while the server is down, and once it answers the reconciler embeds what was accepted meanwhile', async () => {
      const server = await serve();
      await server.stop();
      const { logger, records } = capturingLogger();
      const { memory, services } = await testMemory(config(wire, server, { embedding_retries: 0, reconcile_interval_s: 0.3, reconcile_after_s: 0.2 }), { logger });
      try {
        const ready = await memory.ready();
        assert.equal(ready.embedder.status, 'unavailable');
        assert.match(ready.embedder.error!, /is not reachable/);
        await memory.addTurns(turns(6, 's1'));
        await memory.idle();
        assert.equal((await services.turnLog.counts()).pending_embed, 6, 'accepted, not embedded, not lost');
        await server.restart();
        await until('every turn embedded', async () => (await services.turnLog.counts()).pending_embed === 0, 15_000, 100);
        assert.equal(services.embedders.status, 'ready');
        assert.equal(await services.vectors.count(services.embedders.current()!), 6);
        assert.equal(records().filter((x) => x.level === 40 && /embedding server does not answer/.test(x.msg)).length, 1);
      } finally {
        await memory.close();
      }
    });

    it('a text the server refuses fails its own job only, not the others gathered into its batch', async () => {
      const server = await startFakeEmbeddingServer({ wire, models: [MODEL[wire]], maxChars: 500 });
      servers.push(server);
      const { memory, services } = await testMemory(config(wire, server, { embedding_batch_size: 16 }));
      try {
        await memory.ready();
        const batch = turns(6, 's1');
        batch[2] = { ...batch[2]!, content: `a very long turn ${'word '.repeat(200)}` };
        await memory.addTurns(batch);
        // the refused one is retried by its queue meanwhile, refused each time
        // a vector is written before its turn is marked embedded: wait for both
        await until('the five others embedded', async () => (await services.vectors.count(services.embedders.current()!)) === 5 && (await services.turnLog.counts()).pending_embed === 1, 10_000, 50);
        assert.equal((await services.turnLog.counts()).pending_embed, 1);
        assert.equal(await services.vectors.count(services.embedders.current()!), 5);
        assert.ok(server.requests.some((r) => r.status === 400 && r.texts.length > 1), 'the batch was refused first');
        assert.equal(services.embedders.status, 'ready', 'a refused text is no outage');
      } finally {
        await memory.close();
      }
    });

    it('refuses an answer of another width than the first, using nothing of it', async () => {
      const server = await serve({ dim: 64 });
      const { memory, services } = await testMemory(config(wire, server, { embedding_retries: 0 }));
      try {
        await memory.ready();
        const embedder = services.embedders.current()!;
        server.setWidth(32);
        await assert.rejects(embedder.embed(['hello there']), /answered a 32-dimension vector, but its first answer had 64 dimensions.*memory reindex/);
        await memory.addTurns(turns(1, 's1'));
        await new Promise((res) => setTimeout(res, 300));
        assert.equal(await services.vectors.count(), 0);
        assert.equal((await services.turnLog.counts()).pending_embed, 1);
        assert.equal(services.embedders.status, 'ready', 'a wrong width is no outage');
      } finally {
        await memory.close();
      }
    });

    it('fails to load, saying why, when embedding_dimensions is not what the server answers', async () => {
      const server = await serve({ dim: 64 });
      // OpenAI-compatible servers are asked for the width (`dimensions`); Ollama is only held to it
      const { memory, services } = await testMemory(config(wire, server, { embedding_dimensions: 48 }));
      try {
        await memory.ready();
        if (wire === 'openai') {
          assert.equal(services.embedders.current()?.dim, 48);
          assert.equal(server.requests[0]!.body.dimensions, 48);
        } else {
          assert.equal(services.embedders.status, 'failed');
          assert.match(services.embedders.error!, /answers 64-dimension vectors, but embedding_dimensions is 48/);
        }
      } finally {
        await memory.close();
      }
    });

    it('fails for good, naming the model, when the server does not serve it', async () => {
      const server = await serve();
      const { memory, services } = await testMemory(config(wire, server, { embedding_model: 'no-such-model' }));
      try {
        await memory.ready();
        assert.equal(services.embedders.status, 'failed');
        assert.match(services.embedders.error!, /no-such-model/);
        assert.match(services.embedders.error!, /HTTP 404/);
      } finally {
        await memory.close();
      }
    });

    it('in privacy mode, refuses a server that is not loopback at start, and accepts a loopback one', async () => {
      const server = await serve();
      await assert.rejects(testMemory(config(wire, server, { privacy_mode: true, embedding_url: 'http://10.20.30.40:11434' })), (err: Error) => {
        assert.equal(err.name, 'ConfigError');
        assert.match(err.message, /privacy_mode is on, but embedding_provider "\w+" would send the text of every turn and query to http:\/\/10\.20\.30\.40:11434, which is not a loopback address/);
        return true;
      });
      // declared local by the user: accepted (it does not answer here, which is another matter)
      const lan = await testMemory(config(wire, server, { privacy_mode: true, embedding_url: 'http://10.20.30.40:9', embedding_url_is_local: true, embedding_timeout_ms: 200, embedding_retries: 0 }));
      await lan.memory.close();
      const local = await testMemory(config(wire, server, { privacy_mode: true }));
      try {
        assert.equal((await local.memory.ready()).embedder.status, 'ready');
      } finally {
        await local.memory.close();
      }
    });
  });
}

describe('embedding_api_key (openai)', () => {
  const KEY = 'sk-test-0123456789-secret';
  const servers: FakeEmbeddingServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  it('is required, at start, for the OpenAI API itself', async () => {
    await assert.rejects(testMemory({ embedding_provider: 'openai' }), (err: Error) => err.name === 'ConfigError' && /needs embedding_api_key/.test(err.message));
  });

  it('is sent as a bearer key; a server that wants one and gets none or another says so, and the key is never shown', async () => {
    const server = await startFakeEmbeddingServer({ wire: 'openai', apiKey: KEY });
    servers.push(server);
    const good = await testMemory(config('openai', server, { embedding_api_key: KEY }));
    try {
      assert.equal((await good.memory.ready()).embedder.status, 'ready');
      assert.equal(server.requests[0]!.headers.authorization, `Bearer ${KEY}`);
    } finally {
      await good.memory.close();
    }

    const none = await testMemory(config('openai', server));
    try {
      await none.memory.ready();
      assert.equal(none.services.embedders.status, 'failed');
      assert.match(none.services.embedders.error!, /HTTP 401.*\(set embedding_api_key\)/);
    } finally {
      await none.memory.close();
    }

    // a wrong key that the server echoes back in its error
    const wrongKey = 'sk-wrong-9876543210-secret';
    const { logger, lines } = capturingLogger();
    const wrong = await testMemory(config('openai', server, { embedding_api_key: wrongKey }), { logger });
    try {
      await wrong.memory.ready();
      assert.equal(wrong.services.embedders.status, 'failed');
      assert.match(wrong.services.embedders.error!, /HTTP 401: Incorrect API key provided: \[embedding_api_key\].*check embedding_api_key/);
      const health = await healthReport(wrong.services);
      const shown = [wrong.services.embedders.error, JSON.stringify(health), JSON.stringify(publicHealth(health)), ...lines].join('\n');
      assert.ok(!shown.includes(wrongKey), 'the key is in no error, health report or log line');
      assert.ok(shown.includes('[embedding_api_key]'));
    } finally {
      await wrong.memory.close();
    }
  });
});
