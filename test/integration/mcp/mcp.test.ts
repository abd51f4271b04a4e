import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, startCli, stop } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';

const TOOLS = ['add_turns', 'delete_memory', 'forget_session', 'get_memory', 'retrieve', 'search_memory', 'update_memory'];
const ALICE_KEY = 'alice-key-0000000000000000';
const BOB_KEY = 'bob-key-00000000000000000000';

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: any;
  _meta?: Record<string, any>;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await call(client, name, args);
  assert.ok(!r.isError, `${name} failed: ${r.content[0]?.text}`);
  assert.ok(r.content[0]?.type === 'text' && r.content[0].text!.length > 0, `${name} answers text an LLM reads`);
  return r.structuredContent;
}

/** The call fails as a tool error (not a protocol error) carrying `code` in its text and its _meta. */
async function refused(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<ToolResult> {
  const r = await call(client, name, args);
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail with ${code}, got ${r.content[0]?.text}`);
  assert.equal(r._meta?.['neuralcleave/error']?.code, code, `${name}: ${r.content[0]?.text}`);
  assert.match(r.content[0]!.text!, new RegExp(`^${code}: `));
  assert.equal(r.structuredContent, undefined);
  return r;
}

const env = (dir: string): Record<string, string> => ({
  NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'),
  NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
  NEURALCLEAVE_LOG_LEVEL: 'warn',
});

/** What both doors must do alike, given a client acting for alice and one acting for bob. */
function scenario(name: string, connect: (user: 'alice' | 'bob') => Promise<Client>): void {
  const tag = name.replace(/\W+/g, '-'); // ids may hold no spaces
  describe(`MCP over ${name}`, () => {
    let alice: Client;
    let bob: Client;
    before(async () => {
      [alice, bob] = await Promise.all([connect('alice'), connect('bob')]);
    });
    after(async () => {
      await Promise.allSettled([alice?.close(), bob?.close()]);
    });

    test('lists the seven tools, each with a description and an input schema; forget_session needs confirm', async () => {
      const { tools } = await alice.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
      for (const t of tools) {
        assert.ok((t.description ?? '').length > 80, `${t.name} has a description a model can act on`);
        assert.equal(t.inputSchema.type, 'object');
      }
      const forget = tools.find((t) => t.name === 'forget_session')!;
      assert.match(forget.description!, /DESTRUCTIVE/);
      assert.equal(forget.annotations?.destructiveHint, true);
      assert.ok(forget.inputSchema.required?.includes('confirm'));
      const retrieve = tools.find((t) => t.name === 'retrieve')!;
      assert.equal(retrieve.annotations?.readOnlyHint, true);
      assert.ok(retrieve.outputSchema, 'retrieve declares the HTTP response schema as its output');
      assert.ok(!tools.find((t) => t.name === 'add_turns')!.inputSchema.required?.includes('user_id'), 'user_id is optional');
    });

    test('add_turns, then retrieve from a new session finds them; delete_memory removes one', async () => {
      const added = await ok(alice, 'add_turns', {
        session_id: 'trip',
        turns: [
          { id: `${tag}-a1`, role: 'user', content: 'My sister Ana works as a dentist in Porto.' },
          { id: `${tag}-a2`, role: 'assistant', content: 'A dentist in Porto, noted.' },
          { id: `${tag}-a3`, role: 'user', content: 'I booked the Casa Verde hotel for the Lisbon trip.' },
        ],
      });
      assert.deepEqual(added, { ids: [`${tag}-a1`, `${tag}-a2`, `${tag}-a3`], accepted: 3, duplicates: 0 });
      const again = await ok(alice, 'add_turns', { session_id: 'trip', turns: [{ id: `${tag}-a1`, role: 'user', content: 'My sister Ana works as a dentist in Porto.' }] });
      assert.equal(again.duplicates, 1, 'a resent id is stored once');

      let found: any;
      await until(
        'the turns to reach the long-term tier',
        async () => {
          found = await ok(alice, 'retrieve', { query: 'what is my sister job dentist', session_id: 'later' });
          return found.results.some((r: any) => r.id === `${tag}-a1` && r.tier !== 'short_term');
        },
        20_000,
      );
      assert.match(found.prompt_blocks, /dentist in Porto/);
      const hit = found.results.find((r: any) => r.id === `${tag}-a1`);
      assert.equal(hit.user_id, 'alice', 'no user named: the key’s only user');
      assert.equal(typeof hit.explain.relevance, 'number');
      const text = (await call(alice, 'retrieve', { query: 'sister dentist', session_id: 'later' })).content[0]!.text!;
      assert.match(text, new RegExp(`${tag}-a1 · score`), 'the text lists result ids for the follow-up tools');

      await until('the hotel turn to be searchable', async () => (await ok(alice, 'search_memory', { query: 'Casa Verde' })).entries.length === 1, 20_000);
      const got = await ok(alice, 'get_memory', { id: `${tag}-a3` });
      assert.equal(got.content, 'I booked the Casa Verde hotel for the Lisbon trip.');
      const edited = await ok(alice, 'update_memory', { id: `${tag}-a3`, pinned: true, importance: 0.9 });
      assert.equal(edited.pinned, true);
      await refused(alice, 'update_memory', { id: `${tag}-a3` }, 'bad_request');

      const deleted = await ok(alice, 'delete_memory', { id: `${tag}-a3` });
      assert.equal(deleted.removed.long_term, true);
      assert.equal(deleted.removed.turn_log, true);
      await refused(alice, 'get_memory', { id: `${tag}-a3` }, 'not_found');
      const after = await ok(alice, 'retrieve', { query: 'Casa Verde hotel Lisbon', session_id: 'trip' });
      assert.ok(!after.results.some((r: any) => r.id === `${tag}-a3`), 'a deleted memory is not retrieved, not even from the short-term tier');
      assert.equal((await ok(alice, 'search_memory', { query: 'Casa Verde' })).entries.length, 0);
    });

    test("alice's connection cannot reach bob's memories through any tool or the resource", async () => {
      const secret = `${tag}-bob-1`;
      await ok(bob, 'add_turns', { session_id: 'bob-s', turns: [{ id: secret, role: 'user', content: 'My locker code at the gym is 4321.' }] });
      await until('bob’s turn to be stored', async () => (await ok(bob, 'search_memory', { query: 'locker code' })).entries.length === 1, 20_000);

      await refused(alice, 'add_turns', { session_id: 'bob-s', user_id: 'bob', turns: [{ role: 'user', content: 'planted by alice' }] }, 'forbidden');
      await refused(alice, 'retrieve', { query: 'locker code', user_id: 'bob' }, 'forbidden');
      await refused(alice, 'retrieve', { query: 'locker code', user_id: 'bob', session_id: 'bob-s' }, 'forbidden');
      await refused(alice, 'search_memory', { query: 'locker', user_id: 'bob' }, 'forbidden');
      await refused(alice, 'get_memory', { id: secret }, 'not_found');
      await refused(alice, 'update_memory', { id: secret, content: 'overwritten by alice' }, 'not_found');
      await refused(alice, 'delete_memory', { id: secret }, 'not_found');
      await refused(alice, 'forget_session', { session_id: 'bob-s', user_id: 'bob', confirm: true }, 'forbidden');
      const own = await ok(alice, 'retrieve', { query: 'locker code gym 4321', session_id: 'bob-s' });
      assert.ok(!own.results.some((r: any) => /locker/.test(r.content)), 'alice’s own retrieve, in bob’s session id, sees nothing of bob');
      assert.equal((await ok(alice, 'search_memory', { query: 'locker' })).entries.length, 0);
      await assert.rejects(alice.readResource({ uri: 'memory://users/bob/sessions/bob-s/recent' }), /forbidden/);
      const listed = (await alice.listResources()).resources.map((r) => r.uri);
      assert.ok(listed.includes('memory://users/alice/sessions/trip/recent'), listed.join(', '));
      assert.ok(!listed.some((u) => u.includes('/users/bob/')), 'alice is shown her sessions only');
      assert.ok((await bob.listResources()).resources.some((r) => r.uri === 'memory://users/bob/sessions/bob-s/recent'));

      // bob's memory is exactly as it was
      const mine = await ok(bob, 'get_memory', { id: secret });
      assert.equal(mine.content, 'My locker code at the gym is 4321.');
      const recent = JSON.parse(((await bob.readResource({ uri: 'memory://users/bob/sessions/bob-s/recent' })).contents[0] as { text: string }).text);
      assert.deepEqual(
        recent.turns.map((t: any) => t.content),
        ['My locker code at the gym is 4321.'],
      );
    });

    test('bad arguments are tool errors naming each field; forget_session needs confirm: true, then erases the session', async () => {
      const bad = await refused(alice, 'retrieve', { query: '', top_k: 'many', color: 'red' }, 'bad_request');
      const paths = bad._meta!['neuralcleave/error'].details.map((d: any) => d.path).sort();
      assert.deepEqual(paths, ['color', 'query', 'top_k']);
      await refused(alice, 'add_turns', { session_id: 'x', turns: [] }, 'bad_request');
      const half = await refused(alice, 'add_turns', { session_id: 'half', turns: [{ id: `${tag}-h1`, role: 'user', content: 'I play the oboe.' }, { role: 'user', content: '   ' }] }, 'bad_request');
      assert.deepEqual(half._meta!['neuralcleave/error'].details.map((d: any) => d.path), ['turns.1.content']);
      const session = JSON.parse(((await alice.readResource({ uri: 'memory://users/alice/sessions/half/recent' })).contents[0] as { text: string }).text);
      assert.deepEqual(session.turns, [], 'nothing of a refused batch is written');
      await assert.rejects(alice.callTool({ name: 'no_such_tool', arguments: {} }), /no tool "no_such_tool"/);

      await ok(alice, 'add_turns', { session_id: 'gone', turns: [{ id: `${tag}-g1`, role: 'user', content: 'I adopted a cat named Miso.' }] });
      await until('the cat turn to be stored', async () => (await ok(alice, 'search_memory', { query: 'Miso' })).entries.length === 1, 20_000);
      await refused(alice, 'forget_session', { session_id: 'gone' }, 'bad_request');
      await refused(alice, 'forget_session', { session_id: 'gone', confirm: false }, 'bad_request');
      assert.equal((await ok(alice, 'search_memory', { query: 'Miso' })).entries.length, 1, 'nothing erased without confirm');
      const report = await ok(alice, 'forget_session', { session_id: 'gone', confirm: true });
      assert.equal(report.turn_log, 1);
      assert.deepEqual(report.errors, []);
      assert.equal((await ok(alice, 'search_memory', { query: 'Miso' })).entries.length, 0);
      await refused(alice, 'get_memory', { id: `${tag}-g1` }, 'not_found');
      // an empty session is not_found, as DELETE /users/:user_id/sessions/:session_id answers 404 (issue 26, defect 10)
      await refused(alice, 'forget_session', { session_id: 'gone', confirm: true }, 'not_found');
      await refused(alice, 'forget_session', { session_id: 'never-used', confirm: true }, 'not_found');
      // a malformed percent-escape in a resource URI is invalid params naming it, not an internal error
      const malformed = await alice.readResource({ uri: 'memory://users/alice/sessions/%E0%A4%zz/recent' }).then(
        () => assert.fail('read a malformed URI'),
        (err: { code: number; message: string }) => err,
      );
      assert.equal(malformed.code, -32602, malformed.message);
      assert.match(malformed.message, /bad_request: invalid session id: malformed percent-escape/);
      // still connected after every refusal
      assert.deepEqual((await alice.listTools()).tools.length, TOOLS.length);
    });
  });
}

describe('neuralcleave mcp (stdio, spawned by the SDK client)', () => {
  const dir = tmpDir();
  const children: StdioClientTransport[] = [];
  scenario('stdio', async (user) => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--user', user], env: { PATH: process.env.PATH ?? '', ...env(dir) }, stderr: 'pipe' });
    children.push(transport);
    const client = new Client({ name: `test-${user}`, version: '1.0.0' });
    await client.connect(transport);
    return client;
  });

  test('the process exits when its client closes stdin', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: { PATH: process.env.PATH ?? '', ...env(dir) }, stderr: 'pipe' });
    const client = new Client({ name: 'closer', version: '1.0.0' });
    await client.connect(transport);
    const pid = transport.pid!;
    await client.close();
    await until('the mcp process to exit', () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 10_000);
  });
});

describe('serve: POST /mcp (Streamable HTTP) behind the API keys', () => {
  const dir = tmpDir();
  let child: ChildProcess;
  let base = '';
  before(async () => {
    const started = await startCli(['serve'], { ...env(dir), NEURALCLEAVE_PORT: '0', NEURALCLEAVE_API_KEYS: `${ALICE_KEY}=alice;${BOB_KEY}=bob` }, /listening on (http:\/\/\S+)/);
    child = started.child;
    base = started.match[1]!;
  });
  after(async () => {
    if (child) await stop(child);
  });

  const connect = async (key: string | null): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), key ? { requestInit: { headers: { Authorization: `Bearer ${key}` } } } : {});
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };
  scenario('Streamable HTTP', (user) => connect(user === 'alice' ? ALICE_KEY : BOB_KEY));

  test('no key or a wrong key: 401 before any tool runs; GET /mcp is 405', async () => {
    await assert.rejects(connect(null), /401|unauthorized/i);
    await assert.rejects(connect('not-a-key-000000000000000'), /401|unauthorized/i);
    const raw = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    assert.equal(raw.status, 401);
    assert.equal(((await raw.json()) as any).error.code, 'unauthorized');
    const get = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    assert.equal(get.status, 405);
  });
});
