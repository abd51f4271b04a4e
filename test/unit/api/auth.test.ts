import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertMayTouch, defaultUserOf, KeyTable, mayTouch } from '../../../src/api/auth.js';
import { assertSafeBind } from '../../../src/api/server.js';
import { parseConfig } from '../../../src/config/load.js';
import { ForbiddenError } from '../../../src/errors.js';

const ALICE = 'alice-key-0123456789abcdef';
const TEAM = 'team-key-0123456789abcdef0';
const ADMIN = 'admin-key-0123456789abcdef';

const table = new KeyTable([
  { key: ALICE, users: ['alice'] },
  { key: TEAM, users: ['alice', 'bob'] },
  { key: ADMIN, users: ['*'] },
]);

describe('KeyTable', () => {
  test('no keys configured: every request is open', () => {
    const open = new KeyTable([]);
    assert.equal(open.enabled, false);
    assert.deepEqual(open.identify(undefined), { kind: 'open' });
    assert.deepEqual(open.identify('Bearer anything'), { kind: 'open' });
  });

  test('a known key identifies its users; the label never holds the key', () => {
    const p = table.identify(`Bearer ${ALICE}`);
    assert.ok(p && p.kind === 'key');
    assert.deepEqual(p.users, new Set(['alice']));
    assert.equal(p.label, 'api_keys[0]');
    assert.ok(!JSON.stringify(p).includes(ALICE));
    const admin = table.identify(`bearer   ${ADMIN}`); // scheme is case-insensitive
    assert.ok(admin && admin.kind === 'key' && admin.users === 'all');
  });

  test('missing, malformed, unknown, truncated and extended keys are refused', () => {
    for (const header of [undefined, '', ALICE, `Basic ${ALICE}`, `Bearer`, `Bearer ${ALICE.slice(0, -1)}`, `Bearer ${ALICE}x`, `Bearer ${ALICE} extra`, `Bearer ${ALICE.toUpperCase()}`]) {
      assert.equal(table.identify(header), null, String(header));
    }
  });

  test('mayTouch and the default user follow the binding', () => {
    const alice = table.identify(`Bearer ${ALICE}`)!;
    const team = table.identify(`Bearer ${TEAM}`)!;
    const admin = table.identify(`Bearer ${ADMIN}`)!;
    assert.equal(mayTouch(alice, 'alice'), true);
    assert.equal(mayTouch(alice, 'bob'), false);
    assert.equal(mayTouch(team, 'bob'), true);
    assert.equal(mayTouch(admin, 'anyone'), true);
    assert.equal(defaultUserOf(alice), 'alice');
    assert.equal(defaultUserOf(team), 'default');
    assert.equal(defaultUserOf(admin), 'default');
    assert.equal(defaultUserOf({ kind: 'open' }), 'default');
    assert.throws(() => assertMayTouch(alice, 'bob'), ForbiddenError);
  });
});

describe('assertSafeBind', () => {
  test('loopback binds without keys; any other address needs keys', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) assert.doesNotThrow(() => assertSafeBind(parseConfig({ host })));
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.org']) {
      assert.throws(() => assertSafeBind(parseConfig({ host })), /refusing to bind/);
      assert.doesNotThrow(() => assertSafeBind(parseConfig({ host, api_keys: [{ key: ALICE, users: ['alice'] }] })));
    }
  });
});
