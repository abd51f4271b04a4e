import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tmpDir } from '../../helpers/tmp.js';
import { startApi, type Api } from './harness.js';

const ALICE = 'alice-key-aaaaaaaaaaaaaaaa';
const BOB = 'bob-key-bbbbbbbbbbbbbbbbbbbb';
const ADMIN = 'admin-key-dddddddddddddddd';
const MARKER = 'zebracrossing4471';

/** every byte of the SQLite file and its write-ahead log */
function fileHolds(path: string, text: string): boolean {
  return [path, `${path}-wal`].some((p) => existsSync(p) && readFileSync(p).includes(Buffer.from(text)));
}

describe('erasure over HTTP: DELETE /users/:user_id and DELETE /users/:user_id/sessions/:session_id', () => {
  let api: Api;
  // made here, not in before(): the file must live as long as the suite (a tmpDir made in a hook goes with the hook)
  const sqlitePath = join(tmpDir(), 'erasure.db');
  const retrieve = (key: string, session?: string) =>
    api.request('POST', '/memory/retrieve', { key, body: { query: `${MARKER} ferry`, user_id: 'alice', ...(session ? { session_id: session } : {}), top_k: 50 } });

  before(async () => {
    api = await startApi({ sqlite_path: sqlitePath, api_keys: [{ key: ALICE, users: ['alice'] }, { key: BOB, users: ['bob'] }, { key: ADMIN, users: ['*'] }] });
    for (const [key, user, session] of [[ALICE, 'alice', 'a1'], [ALICE, 'alice', 'a2'], [BOB, 'bob', 'b1']] as const) {
      const r = await api.request('POST', `/sessions/${session}/turns`, {
        key,
        body: { turns: [0, 1, 2].map((i) => ({ user_id: user, role: 'user', content: `${user} ${session} note ${i}: the ${MARKER} ferry leaves at nine`, importance: 0.9, metadata: { tag: MARKER } })) },
      });
      assert.equal(r.status, 202, r.text);
    }
    await api.memory.idle();
  });
  after(() => api.close());

  test('keys: no key 401, another user\'s key 403, and nothing is erased', async () => {
    assert.equal((await api.request('DELETE', '/users/alice')).status, 401);
    const r = await api.request('DELETE', '/users/alice', { key: BOB });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'forbidden');
    assert.equal((await api.request('DELETE', '/users/alice/sessions/a1', { key: BOB })).status, 403);
    assert.equal((await retrieve(ALICE)).json.results.length, 6, 'alice still has her six turns');
    assert.ok(fileHolds(api.services.config.sqlite_path, `alice a2 note 0: the ${MARKER}`), 'the check below can see text in the file');
    assert.equal((await api.request('GET', '/users/alice', { key: ALICE })).status, 405);
  });

  test("the user's own key clears one session: a retrieve right after finds none of it, the other session stays", async () => {
    const r = await api.request('DELETE', '/users/alice/sessions/a1', { key: ALICE });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.scope, { user_id: 'alice', session_id: 'a1' });
    assert.deepEqual([r.json.turn_log, r.json.short_term, r.json.vectors, r.json.long_term.turn], [3, 1, 3, 3]);
    assert.deepEqual(r.json.errors, []);
    const left = (await retrieve(ALICE, 'a1')).json.results as Array<{ session_id: string }>;
    assert.equal(left.length, 3);
    assert.ok(left.every((x) => x.session_id === 'a2'), 'only a2 is left');
    const again = await api.request('DELETE', '/users/alice/sessions/a1', { key: ALICE });
    assert.equal(again.status, 404, 'nothing left to erase is not a success');
  });

  test('an admin key forgets alice: nothing of hers is retrieved, and the marker is in no tier and not in the file', async () => {
    const r = await api.request('DELETE', '/users/alice', { key: ADMIN });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.scope, { user_id: 'alice' });
    assert.equal(r.json.turn_log, 3);
    assert.deepEqual((await retrieve(ALICE)).json.results, []);
    assert.deepEqual((await retrieve(ALICE, 'a2')).json.results, []);
    const services = api.services;
    const { db, shortTerm } = services;
    for (const table of ['turns', 'entries', 'vectors']) {
      const n = (db!.prepare(`SELECT count(*) AS n FROM ${table} WHERE content LIKE ? OR user_id = 'alice'`).get(`%alice%${MARKER}%`) as { n: number }).n;
      assert.equal(n, 0, `${table} holds nothing of alice`);
    }
    assert.deepEqual(await shortTerm.sessions('alice'), []);
    assert.deepEqual(await shortTerm.recent('alice', 'a2'), []);
    const jobs = await services.queue.removeJobs('embed', (d) => JSON.stringify(d).includes('alice'));
    assert.equal(jobs.removed + jobs.active, 0, 'no job holds her text');
    // bob's turns hold the marker too; alice's words do not survive anywhere in the file
    assert.equal(fileHolds(services.config.sqlite_path, `alice a2 note 0: the ${MARKER}`), false, 'not in the SQLite file or its WAL');
    assert.equal((await api.request('POST', '/memory/retrieve', { key: BOB, body: { query: `${MARKER} ferry`, user_id: 'bob' } })).json.results.length, 3, 'bob untouched');
    const again = await api.request('DELETE', '/users/alice', { key: ADMIN });
    assert.equal(again.status, 404);
    assert.equal(again.json.error.code, 'not_found');
    assert.equal((await api.request('DELETE', '/users/nobody', { key: ADMIN })).status, 404);
  });

  test('the routes are in the OpenAPI document', async () => {
    const doc = (await api.request('GET', '/openapi.json', { key: ADMIN })).json;
    assert.ok(doc.paths['/users/{user_id}'].delete);
    assert.ok(doc.paths['/users/{user_id}/sessions/{session_id}'].delete);
    assert.ok(doc.paths['/memory/retrieve'].post.requestBody.content['application/json'].schema.properties.filters, 'filters documented');
  });
});
