import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { EXPORT_FORMAT, EXPORT_VERSION, importRecords } from '../../../src/memory/export.js';
import { ValidationError } from '../../../src/errors.js';
import { testMemory } from '../../helpers/services.js';

describe('import: metadata every store can hold', () => {
  it('refuses an entry whose metadata holds U+0000, naming the record and the field, and stores nothing', async () => {
    const { services } = await testMemory();
    after(() => services.close());
    const at = '2026-01-01T00:00:00.000Z';
    const entry = (id: string, metadata: Record<string, unknown> | null) => ({
      type: 'entry', id, user_id: 'ann', session_id: 's', role: 'user', name: null, kind: 'turn', content: `entry ${id}`,
      importance: 0.5, pinned: false, metadata, covers: null, created_at: at, updated_at: at, vector: null,
    });
    const header = { format: EXPORT_FORMAT, version: EXPORT_VERSION, user_id: 'ann', exported_at: at };
    await assert.rejects(importRecords(services, [header, entry('e1', { ok: true }), entry('e2', { note: 'a\u0000b' })]), (err: unknown) => {
      assert.ok(err instanceof ValidationError, String(err));
      assert.deepEqual(err.details!.map((d) => d.path), ['record 3: metadata.note']);
      return true;
    });
    assert.equal(await services.longTerm.get('ann', 'e1'), null, 'nothing of the file was written');
  });
});
