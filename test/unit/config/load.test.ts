import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findConfigFile, loadConfig } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';
import { tmpDir } from '../../helpers/tmp.js';

describe('loadConfig', () => {
  const dir = tmpDir();

  it('gives the documented defaults with no file and no variables', () => {
    const c = loadConfig({ env: {}, cwd: dir });
    assert.equal(c.sqlite_path, './data/neuralcleave.db');
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.context_window, 8192);
    assert.equal(c.compaction_threshold, 0.5);
    assert.equal(c.archival_cron, '0 3 * * *');
    assert.equal(c.max_turn_chars, 32_000);
    assert.equal(c.embedding_model, 'Xenova/all-MiniLM-L6-v2');
    assert.ok(Object.isFrozen(c));
  });

  it('reads the TOML file and lets variables override it', () => {
    const file = join(dir, 'a.toml');
    writeFileSync(file, 'port = 9000\nprivacy_mode = true\n[[api_keys]]\nkey = "0123456789abcdef0"\nusers = ["alice"]\n');
    const c = loadConfig({ env: { NEURALCLEAVE_PORT: '9100', NEURALCLEAVE_IMPORTANCE_THRESHOLD: '0.4' }, file, cwd: dir });
    assert.equal(c.port, 9100);
    assert.equal(c.importance_threshold, 0.4);
    assert.equal(c.privacy_mode, true);
    assert.deepEqual(c.api_keys, [{ key: '0123456789abcdef0', users: ['alice'] }]);
  });

  it('parses api_keys from the environment form', () => {
    const c = loadConfig({ env: { NEURALCLEAVE_API_KEYS: 'keyAkeyAkeyAkeyA=alice,bob;keyBkeyBkeyBkeyB=*' }, cwd: dir });
    assert.deepEqual(c.api_keys, [
      { key: 'keyAkeyAkeyAkeyA', users: ['alice', 'bob'] },
      { key: 'keyBkeyBkeyBkeyB', users: ['*'] },
    ]);
  });

  it('names an unknown variable', () => {
    assert.throws(() => loadConfig({ env: { NEURALCLEAVE_PROT: '1' }, cwd: dir }), (e: unknown) => e instanceof ConfigError && /NEURALCLEAVE_PROT/.test(e.message));
  });

  it('names an unknown key in the file', () => {
    const file = join(dir, 'b.toml');
    writeFileSync(file, 'prot = 1\n');
    assert.throws(() => loadConfig({ env: {}, file, cwd: dir }), (e: unknown) => e instanceof ConfigError && /prot/.test(e.message));
  });

  it('names a bad value', () => {
    assert.throws(
      () => loadConfig({ env: { NEURALCLEAVE_PORT: 'eighty' }, cwd: dir }),
      (e: unknown) => e instanceof ConfigError && /port/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ env: { NEURALCLEAVE_COMPACTION_THRESHOLD: '1.5' }, cwd: dir }),
      (e: unknown) => e instanceof ConfigError && /compaction_threshold/.test(e.message),
    );
  });

  it('reads database_url from NEURALCLEAVE_DATABASE_URL and refuses one that is not a PostgreSQL URL, without echoing it', () => {
    assert.equal(loadConfig({ env: {}, cwd: dir }).database_url, undefined, 'unset by default: the SQLite file');
    const c = loadConfig({ env: { NEURALCLEAVE_DATABASE_URL: 'postgres://nc@db.internal:5432/memory', NEURALCLEAVE_DATABASE_POOL_MAX: '4' }, cwd: dir });
    assert.equal(c.database_url, 'postgres://nc@db.internal:5432/memory');
    assert.equal(c.database_pool_max, 4);
    assert.equal(c.database_statement_timeout_ms, 30_000);
    assert.equal(loadConfig({ env: { NEURALCLEAVE_DATABASE_URL: '' }, cwd: dir }).database_url, undefined, 'empty means unset');
    for (const bad of ['mysql://nc:s3cret@db/memory', 'postgres:///nc:s3cret', 'db.internal:5432/memory']) {
      assert.throws(
        () => loadConfig({ env: { NEURALCLEAVE_DATABASE_URL: bad }, cwd: dir }),
        (e: unknown) => e instanceof ConfigError && /database_url/.test(e.message) && /postgres:\/\//.test(e.message) && !/s3cret/.test(e.message),
        bad,
      );
    }
  });

  it('reports a file that is not TOML', () => {
    const file = join(dir, 'c.toml');
    writeFileSync(file, 'port = = 3\n');
    assert.throws(() => loadConfig({ env: {}, file, cwd: dir }), (e: unknown) => e instanceof ConfigError && /not valid TOML/.test(e.message));
  });

  it("reads relative paths of the file, and the default paths, against the file's folder; those of variables against the working folder", () => {
    const project = join(dir, 'project');
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(join(project, 'sub'), { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(project, 'neuralcleave.toml'), 'model_dir = "models"\n');
    const fromSub = loadConfig({ env: {}, cwd: join(project, 'sub') });
    assert.equal(fromSub.model_dir, join(project, 'models'));
    assert.equal(fromSub.sqlite_path, join(project, 'data', 'neuralcleave.db'), 'the default, beside the file');
    assert.equal(fromSub.model_cache_dir, join(project, 'data', 'models'));
    const viaEnv = loadConfig({ env: { NEURALCLEAVE_CONFIG: join(project, 'neuralcleave.toml'), NEURALCLEAVE_SQLITE_PATH: './mine.db' }, cwd: elsewhere });
    assert.equal(viaEnv.model_dir, join(project, 'models'));
    assert.equal(viaEnv.sqlite_path, './mine.db', 'a variable is relative to where it was typed');
    assert.equal(findConfigFile({ env: {}, cwd: join(project, 'sub') }).found_by, 'folder above the current one');
    assert.equal(findConfigFile({ env: { HOME: join(dir, 'nohome') }, cwd: elsewhere }).file, null);
  });
});

