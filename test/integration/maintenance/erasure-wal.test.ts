import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMemory } from '../../../src/index.js';
import { tmpDir } from '../../helpers/tmp.js';
import { fileBytes } from './helpers.js';

/**
 * Issue 26, acceptance: after delete, prune and edit (not only forget and clear), the removed text is
 * in no byte of the SQLite file — its tables, the full-text index's shadow tables — nor of its WAL,
 * while the service keeps the file open (closing it checkpoints anyway, which would hide the WAL).
 */
describe('delete, prune and edit leave no byte of the old text in the SQLite file or its WAL', () => {
  it('finds each marker before, none after, with the file still open', async () => {
    const path = join(tmpDir(), 'nc.db');
    const memory = await createMemory({ sqlite_path: path, embedding_model: 'hash', log_level: 'silent' });
    try {
      const markers = { deleted: 'zqxdeletedmarker', pruned: 'zqxprunedmarker', edited: 'zqxeditedmarker' };
      await memory.addTurns([
        { id: 'd1', user_id: 'u', session_id: 's', role: 'user', content: `the code ${markers.deleted} opens the shed`, importance: 0.9 },
        { id: 'p1', user_id: 'u', session_id: 'old', role: 'user', content: `the code ${markers.pruned} opens the gate`, importance: 0.9 },
        { id: 'e1', user_id: 'u', session_id: 's', role: 'user', content: `the code ${markers.edited} opens the car`, importance: 0.9 },
        { id: 'k1', user_id: 'u', session_id: 's', role: 'user', content: 'the code zqxkeptmarker opens the attic', importance: 0.9 },
      ]);
      await memory.idle();
      for (const m of Object.values(markers)) assert.ok(fileBytes(path).includes(m), `${m} is stored (file or WAL) before`);

      await memory.delete('u', 'd1');
      await memory.prune({ userId: 'u', sessionId: 'old' });
      await memory.edit('u', 'e1', { content: 'the code was changed' });
      await memory.idle();
      const bytes = fileBytes(path);
      for (const [what, m] of Object.entries(markers)) assert.ok(!bytes.includes(m), `the ${what} text is in no byte of the file or its WAL`);
      assert.ok(bytes.includes('zqxkeptmarker'), 'what was not removed is still there');
      assert.ok(bytes.includes('the code was changed'), "the edit's new text is stored");
    } finally {
      await memory.close();
    }
  });
});
