import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { runCli } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';
import { startApi, storeDigest, type Api } from '../api/harness.js';

const line = (content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ user_id: 'kim', session_id: 'chat', role: 'user', content, created_at: '2026-11-30T10:00:00Z', ...extra });

/** `ingest` checks every line, reports every bad one, and imports all or (with --skip-invalid) the good ones. */
describe('ingest: every bad line reported; --skip-invalid', () => {
  const dir = tmpDir();
  const env = { NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'), NEURALCLEAVE_EMBEDDING_MODEL: 'hash' };
  const users = async () => (await runCli(['memory', 'users', '--json'], env)).stdout;

  it('names every bad line with its line number, field and reason, and imports nothing', async () => {
    const file = join(dir, 'three-bad.jsonl');
    writeFileSync(
      file,
      [
        line('first good line'),
        line('a date with no offset', { created_at: '2024-03-03T10:00:00' }),
        line('pasted from a PDF \u0002 here'),
        '{"user_id":"kim","role":"user","content":"no session"}',
        line('x'.repeat(40_000)),
        line('last good line'),
      ].join('\n'),
    );
    const r = await runCli(['ingest', file], env);
    assert.equal(r.code, EXIT.usage, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.match(lines[0]!, /three-bad\.jsonl:2: created_at: has no time zone offset: add Z for UTC \(2024-03-03T10:00:00Z\)/);
    assert.match(lines[1]!, /three-bad\.jsonl:3: content: contains a control character \(U\+0002 at character 19;/);
    assert.match(lines[2]!, /three-bad\.jsonl:4: session_id: /);
    assert.match(lines[3]!, /three-bad\.jsonl:5: content: .*32000/);
    assert.match(lines[4]!, /^neuralcleave: .*three-bad\.jsonl: 4 invalid lines of 6; nothing was imported \(fix them, or --skip-invalid imports the 2 valid ones\)$/);
    assert.equal(lines.length, 5);
    assert.equal(await users(), '[]\n', 'nothing stored');
  });

  it('reports the first 100 bad lines, then a count', async () => {
    const file = join(dir, 'many-bad.jsonl');
    writeFileSync(file, Array.from({ length: 130 }, (_, i) => (i === 0 ? line('good') : 'not json')).join('\n'));
    const r = await runCli(['ingest', file], env);
    assert.equal(r.code, EXIT.usage);
    const reported = r.stderr.split('\n').filter((l) => /many-bad\.jsonl:\d+: not valid JSON/.test(l));
    assert.equal(reported.length, 100);
    assert.match(reported[0]!, /:2: /);
    assert.match(r.stderr, /\n… and 29 more invalid lines\n/);
  });

  it('--skip-invalid imports the valid lines and writes the invalid ones, byte for byte, to the rejected file', async () => {
    const file = join(dir, 'mixed.jsonl');
    const bad = ['not json', line('no offset', { created_at: '2024-03-03T10:00' }), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]).toString('latin1')];
    const text = [line('I collect old maps'), bad[0], line('I sail on Sundays'), bad[1]].join('\n');
    writeFileSync(file, Buffer.concat([Buffer.from(`${text}\n`), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a])]));
    const r = await runCli(['ingest', file, '--skip-invalid', '--wait'], env);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.match(r.stderr, /mixed\.jsonl:2: not valid JSON/);
    assert.match(r.stderr, /mixed\.jsonl:5: not valid UTF-8/);
    assert.match(r.stderr, /ingested 2 turns from .*mixed\.jsonl: 2 new, 0 already stored\nskipped 3 invalid lines: written, as they were, to .*mixed\.jsonl\.rejected\.jsonl\n/);
    const rejected = readFileSync(`${file}.rejected.jsonl`);
    assert.deepEqual(rejected, Buffer.concat([Buffer.from(`${bad[0]}\n${bad[1]}\n`), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a])]));
    assert.equal(statSync(`${file}.rejected.jsonl`).mode & 0o777, 0o600, 'owner-only: it holds conversations');
    assert.match(await users(), /"user_id":"kim".*"turns":2/);
    const again = await runCli(['ingest', file, '--skip-invalid', '--rejected', join(dir, 'r2.jsonl'), '--json'], env);
    assert.equal(again.code, EXIT.ok, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { file, turns: 2, accepted: 0, duplicates: 2, invalid: 3, rejected_file: join(dir, 'r2.jsonl'), waited: false });
  });

  it('after importing old history, says that the next archival run condenses it, and how to keep it', async () => {
    const file = join(dir, 'old.jsonl');
    writeFileSync(file, `${line('I lived in Leeds back then', { session_id: 'old', created_at: '2023-01-05T09:00:00Z' })}\n`);
    const r = await runCli(['ingest', file], env);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.match(r.stderr, /note: 1 imported session ended more than 30 days ago \(archival_inactive_days\): the next archival run \(\S+\) condenses each into one archive entry.*pin what must stay.*raise archival_inactive_days.*memory archive --dry-run/);
    const recent = await runCli(['ingest', join(dir, 'mixed.jsonl'), '--skip-invalid'], env);
    assert.doesNotMatch(recent.stderr, /archival/, 'recent history: no note');
  });
});

/** The same bytes get the same answer at every door (issue 26, defect 9). */
describe('bytes: ingest and HTTP agree', () => {
  const dir = tmpDir();
  const env = { NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'), NEURALCLEAVE_EMBEDDING_MODEL: 'hash' };
  let api: Api;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const body = (content: string) => Buffer.from(JSON.stringify({ role: 'user', content }));

  it('a UTF-8 byte-order mark at the start: accepted by both, not stored as part of the text', async () => {
    const file = join(dir, 'bom.jsonl');
    writeFileSync(file, Buffer.concat([BOM, Buffer.from(`${line('a file saved by Notepad')}\n`)]));
    const r = await runCli(['ingest', file, '--wait'], env);
    assert.equal(r.code, EXIT.ok, r.stderr);
    const http = await api.request('POST', '/sessions/s/turns', { raw: Buffer.concat([BOM, body('a body with a BOM')]), headers: { 'content-type': 'application/json' } });
    assert.equal(http.status, 202, http.text);
    const stored = JSON.parse((await runCli(['memory', 'list', '--user', 'kim', '--json'], env)).stdout) as Array<{ content: string }>;
    assert.deepEqual(stored.map((e) => e.content), ['a file saved by Notepad']);
  });

  it('invalid UTF-8: refused by both (HTTP 400, ingest names the line), never stored as U+FFFD', async () => {
    const broken = Buffer.concat([Buffer.from('{"user_id":"kim","session_id":"chat","role":"user","content":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const file = join(dir, 'latin1.jsonl');
    writeFileSync(file, Buffer.concat([Buffer.from(`${line('fine')}\n`), broken, Buffer.from('\n')]));
    const before = await storeDigest(api);
    const http = await api.request('POST', '/sessions/s/turns', { raw: Buffer.concat([Buffer.from('{"role":"user","content":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]), headers: { 'content-type': 'application/json' } });
    assert.equal(http.status, 400, http.text);
    assert.equal(await storeDigest(api), before);
    const r = await runCli(['ingest', file], env);
    assert.equal(r.code, EXIT.usage, r.stderr);
    assert.match(r.stderr, /latin1\.jsonl:2: not valid UTF-8/);
    assert.doesNotMatch((await runCli(['memory', 'search', 'caf', '--user', 'kim', '--json'], env)).stdout, /\uFFFD/);
  });

  it('a C0 control character: refused by both with the same reason', async () => {
    const file = join(dir, 'control.jsonl');
    writeFileSync(file, `${line('bell \u0007 here')}\n`);
    const r = await runCli(['ingest', file], env);
    const http = await api.request('POST', '/sessions/s/turns', { raw: body('bell \u0007 here'), headers: { 'content-type': 'application/json' } });
    assert.equal(http.status, 400);
    const reason = (http.json as { error: { details: Array<{ path: string; message: string }> } }).error.details.find((d) => d.path === 'content')!.message;
    assert.match(reason, /^contains a control character \(U\+0007 at character 6;/);
    assert.equal(r.code, EXIT.usage);
    assert.ok(r.stderr.includes(`control.jsonl:1: content: ${reason}`), r.stderr);
  });
});
