import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApi, storeDigest, turn, type Api } from './harness.js';

describe('POST /sessions/:session_id/turns', () => {
  let api: Api;
  before(async () => {
    api = await startApi({ max_turn_chars: 200, max_body_bytes: 64 * 1024 });
  });
  after(() => api.close());

  test('one turn: 202 with its id, durable at once, visible to the next retrieve', async () => {
    const r = await api.request('POST', '/sessions/s1/turns', { body: turn('My sister Clara lives in Lisbon', { name: 'Ana' }) });
    assert.equal(r.status, 202);
    assert.equal(r.json.accepted, 1);
    assert.equal(r.json.duplicates, 0);
    const [id] = r.json.ids as string[];
    // in the turn log (the durable outbox) before any job has run
    const logged = await api.services.turnLog.get('default', id!);
    assert.equal(logged?.session_id, 's1');
    assert.equal(logged?.user_id, 'default');
    assert.equal(logged?.name, 'Ana');
    const retrieved = await api.request('POST', '/memory/retrieve', { body: { query: 'Where does Clara live?', session_id: 's1' } });
    assert.equal(retrieved.status, 200);
    assert.ok(retrieved.json.results.some((x: { id: string }) => x.id === id));
    await api.memory.idle();
    assert.equal((await api.services.longTerm.get('default', id!))?.content, 'My sister Clara lives in Lisbon');
  });

  test('a batch: ids in order; a repeated id is stored once', async () => {
    const body = { turns: [turn('first of batch', { id: 'b-1' }), turn('second of batch', { id: 'b-2', role: 'assistant' }), turn('first of batch', { id: 'b-1' })] };
    const r = await api.request('POST', '/sessions/batch/turns', { body });
    assert.equal(r.status, 202);
    assert.deepEqual(r.json, { ids: ['b-1', 'b-2', 'b-1'], accepted: 2, duplicates: 1 });
    const again = await api.request('POST', '/sessions/batch/turns', { body });
    assert.deepEqual(again.json, { ids: ['b-1', 'b-2', 'b-1'], accepted: 0, duplicates: 3 });
    assert.deepEqual((await api.services.turnLog.session('default', 'batch')).map((t) => t.id), ['b-1', 'b-2']);
  });

  test('a body session_id equal to the path is accepted; user_id from the body', async () => {
    const r = await api.request('POST', '/sessions/s2/turns', { body: turn('named user', { session_id: 's2', user_id: 'zoe' }) });
    assert.equal(r.status, 202);
    assert.equal((await api.services.turnLog.get('zoe', r.json.ids[0]))?.user_id, 'zoe');
  });

  test('the same id under another user is that user\'s own turn', async () => {
    await api.request('POST', '/sessions/c/turns', { body: turn('owned by default', { id: 'taken-id' }) });
    const r = await api.request('POST', '/sessions/c/turns', { body: { turns: [turn('eve first', { user_id: 'eve' }), turn('eve also', { user_id: 'eve', id: 'taken-id' })] } });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.json.accepted, 2);
    assert.equal((await api.services.turnLog.get('default', 'taken-id'))?.content, 'owned by default');
    assert.equal((await api.services.turnLog.get('eve', 'taken-id'))?.content, 'eve also');
  });

  test('the same id with other content is a 409 content_conflict naming the id, and writes nothing', async () => {
    await api.request('POST', '/sessions/cc/turns', { body: turn('the first text', { id: 'cc-1' }) });
    const before = await storeDigest(api);
    const r = await api.request('POST', '/sessions/cc/turns', { body: { turns: [turn('a new one'), turn('another text', { id: 'cc-1' })] } });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.error.code, 'content_conflict');
    assert.match(r.json.error.message, /"cc-1"/);
    assert.deepEqual(r.json.error.details, [{ path: 'turns.1.id', message: '"cc-1" is already stored with other content' }]);
    assert.equal(await storeDigest(api), before);
    const same = await api.request('POST', '/sessions/cc/turns', { body: turn('the first text', { id: 'cc-1' }) });
    assert.deepEqual([same.status, same.json.duplicates], [202, 1], 'an exact re-send stays an idempotent success');
  });

  const refused: Array<[string, number, string, Record<string, unknown>, RegExp]> = [
    ['session_id in the body differs from the path', 400, '/sessions/s1/turns', { body: turn('x', { session_id: 'other' }) }, /session_id/],
    ['one bad turn in a batch', 400, '/sessions/s1/turns', { body: { turns: [turn('fine'), { role: 'robot', content: 'x' }] } }, /turns\.1\.role/],
    ['a batch turn names another session', 400, '/sessions/s1/turns', { body: { turns: [turn('fine'), turn('x', { session_id: 's9' })] } }, /turns\.1\.session_id/],
    ['content over max_turn_chars', 400, '/sessions/s1/turns', { body: turn('x'.repeat(201)) }, /content/],
    ['blank content', 400, '/sessions/s1/turns', { body: turn('   ') }, /content/],
    ['missing role', 400, '/sessions/s1/turns', { body: { content: 'no role' } }, /role/],
    ['unknown field', 400, '/sessions/s1/turns', { body: turn('x', { colour: 'red' }) }, /colour/],
    ['importance out of range', 400, '/sessions/s1/turns', { body: turn('x', { importance: 1.5 }) }, /importance/],
    ['bad created_at', 400, '/sessions/s1/turns', { body: turn('x', { created_at: 'yesterday' }) }, /created_at/],
    ['an id with a slash', 400, '/sessions/s1/turns', { body: turn('x', { id: '../etc' }) }, /id/],
    ['an empty batch', 400, '/sessions/s1/turns', { body: { turns: [] } }, /turns/],
    ['more than 1,000 turns', 400, '/sessions/s1/turns', { body: { turns: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'a' })) } }, /turns/],
    ['extra key beside turns', 400, '/sessions/s1/turns', { body: { turns: [turn('x')], session: 'y' } }, /session/],
    ['a JSON array', 400, '/sessions/s1/turns', { body: [turn('x')] }, /object/],
    ['a JSON string', 400, '/sessions/s1/turns', { raw: '"hello"', headers: { 'content-type': 'application/json' } }, /JSON/],
    ['malformed JSON', 400, '/sessions/s1/turns', { raw: '{"role": "user", "content": ', headers: { 'content-type': 'application/json' } }, /malformed JSON/],
    ['JSON nested 10,000 deep in metadata', 400, '/sessions/s1/turns', { raw: `{"role":"user","content":"x","metadata":{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_001)}}`, headers: { 'content-type': 'application/json' } }, /nested deeper/],
    ['no body', 400, '/sessions/s1/turns', {}, /body is required/],
    ['a session id of 129 characters', 400, `/sessions/${'s'.repeat(129)}/turns`, { body: turn('x') }, /session_id/],
    ['a text/plain body', 415, '/sessions/s1/turns', { raw: 'role=user', headers: { 'content-type': 'text/plain' } }, /JSON/],
    ['a body over max_body_bytes', 413, '/sessions/s1/turns', { body: { turns: Array.from({ length: 400 }, () => turn('y'.repeat(190))) } }, /65536 bytes/],
  ];
  for (const [name, status, path, options, field] of refused) {
    test(`refused, store unchanged: ${name} → ${status}`, async () => {
      const before = await storeDigest(api);
      const r = await api.request('POST', path, options);
      assert.equal(r.status, status, r.text);
      assert.match(r.json.error.message + JSON.stringify(r.json.error.details ?? []), field);
      assert.equal(typeof r.json.error.code, 'string');
      assert.equal(await storeDigest(api), before);
    });
  }

  test('other methods on the path are 405 with Allow', async () => {
    const r = await api.request('GET', '/sessions/s1/turns');
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST');
    assert.equal(r.json.error.code, 'method_not_allowed');
  });

  test('unknown paths are 404 in the error format', async () => {
    const r = await api.request('POST', '/sessions/s1/turnz', { body: turn('x') });
    assert.equal(r.status, 404);
    assert.equal(r.json.error.code, 'not_found');
  });
});
