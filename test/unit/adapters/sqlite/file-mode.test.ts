import assert from 'node:assert/strict';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { tmpDir } from '../../../helpers/tmp.js';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('SQLite file permissions', () => {
  it('creates the database file, its WAL and shared-memory files owner-only (0600), whatever the umask allows', () => {
    const previous = process.umask(0o022);
    try {
      const path = join(tmpDir(), 'nested', 'nc.db');
      const db = openDatabase(path);
      db.exec("CREATE TABLE IF NOT EXISTS probe (x TEXT); INSERT INTO probe VALUES ('written through the WAL')");
      try {
        for (const f of [path, `${path}-wal`, `${path}-shm`]) assert.equal(mode(f).toString(8), '600', f);
      } finally {
        db.close();
      }
    } finally {
      process.umask(previous);
    }
  });

  it("leaves an existing file's mode as its owner set it", () => {
    const path = join(tmpDir(), 'nc.db');
    writeFileSync(path, '');
    chmodSync(path, 0o640);
    openDatabase(path).close();
    assert.equal(mode(path).toString(8), '640');
  });
});
