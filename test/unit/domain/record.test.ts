import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryEntrySchema, RetrievalResultSchema } from '../../../src/domain/entry.js';
import { MemoryRecordSchema, kindOf, recordOf, vectorPayloadOf, VectorPayloadSchema } from '../../../src/domain/record.js';
import { TurnSchema, type Turn } from '../../../src/domain/turn.js';
import { EmbedJobSchema } from '../../../queues/payloads.js';
import { embedJob } from '../../../queues/producers.js';

const RECORD_KEYS = Object.keys(MemoryRecordSchema.shape).sort();
const turn: Turn = {
  id: 't1',
  user_id: 'alice',
  session_id: 's',
  role: 'user',
  name: 'Ana',
  content: 'My sister is a nurse.',
  content_hash: 'h1',
  created_at: '2026-01-01T00:00:00.000Z',
  importance: 0.4,
  pinned: true,
  metadata: { source: 'whatsapp' },
};

describe('the memory record schema', () => {
  it('is the base every memory schema extends', () => {
    const keys = (s: { shape: object }) => Object.keys(s.shape);
    for (const [name, schema, without] of [
      ['turn', TurnSchema, []],
      ['entry', MemoryEntrySchema, []],
      ['vector payload', VectorPayloadSchema, ['id']],
      ['embed job', EmbedJobSchema, ['id']],
      ['retrieval result', RetrievalResultSchema, ['content_hash']],
    ] as const) {
      assert.deepEqual(
        RECORD_KEYS.filter((k) => !keys(schema).includes(k)),
        [...without],
        `${name}: every record field but ${JSON.stringify(without)}`,
      );
    }
    assert.ok(!('kind' in MemoryRecordSchema.shape), 'the kind is added where a memory has one');
  });

  it('recordOf takes exactly the record fields of a wider value', () => {
    const r = recordOf(turn);
    assert.deepEqual(Object.keys(r).sort(), RECORD_KEYS);
    assert.deepEqual(MemoryRecordSchema.parse(turn), r);
    assert.deepEqual(vectorPayloadOf(turn, 'turn'), VectorPayloadSchema.parse({ ...turn, kind: 'turn' }));
  });

  it('an embed job carries the vector payload of its memory, under its id', () => {
    const job = embedJob(turn, 'summary');
    assert.deepEqual(EmbedJobSchema.parse(job.data), { ...vectorPayloadOf(turn, 'summary'), turn_id: 't1' });
    // a job queued before kind and metadata travelled: a turn, without metadata
    const old = EmbedJobSchema.parse({ turn_id: 't1', user_id: 'u', session_id: 's', role: 'user', name: null, content: 'x', content_hash: 'h', created_at: turn.created_at });
    assert.equal(old.kind, 'turn');
    assert.equal(old.metadata, undefined);
  });

  it("reads a turn's kind from its field, else from the metadata of records written before the field", () => {
    assert.equal(kindOf(turn), 'turn');
    assert.equal(kindOf({ ...turn, kind: 'summary' }), 'summary');
    assert.equal(kindOf({ ...turn, metadata: { kind: 'summary', covers_count: 3 } }), 'summary', 'a summary turn stored before the field');
    assert.equal(kindOf({ ...turn, kind: 'turn', metadata: { kind: 'summary' } }), 'turn', 'the field wins');
    assert.equal(kindOf({ ...turn, metadata: { kind: 'recipe' } }), 'turn', 'a metadata kind that is no kind');
    // the short-term tier keeps turns as TurnSchema parses them: the field survives, and its absence too
    assert.equal(TurnSchema.parse({ ...turn, kind: 'summary' }).kind, 'summary');
    assert.ok(!('kind' in TurnSchema.parse(turn)));
  });
});
