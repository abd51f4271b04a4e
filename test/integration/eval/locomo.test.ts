// The LoCoMo evaluation's reader and runner on a hand-made file in LoCoMo's format (the real data is
// never part of the repository): dates, malformed evidence ids, and a full run through the service.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { evidenceIds, parseSessionDate, readLocomo } from '../../../eval/locomo/dataset.js';
import { BASELINES, COMBINED, runLocomo } from '../../../eval/locomo/run.js';
import { tmpDir } from '../../helpers/tmp.js';

const SAMPLE = [
  {
    sample_id: 'conv-x',
    conversation: {
      speaker_a: 'Ada',
      speaker_b: 'Ben',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ada', dia_id: 'D1:1', text: 'Hey Ben! I finally painted the lake at sunrise.' },
        { speaker: 'Ben', dia_id: 'D1:2', text: 'Wow Ada, what are your cats called again?' },
        { speaker: 'Ada', dia_id: 'D1:3', text: 'Luna and Oliver!', img_url: ['x'], blip_caption: 'two cats on a sofa' },
      ],
      session_2_date_time: '10:05 am on 2 June, 2023',
      session_2: [
        { speaker: 'Ben', dia_id: 'D2:1', text: 'I started a pottery class last week.' },
        { speaker: 'Ada', dia_id: 'D2:2', text: 'That sounds fun!' },
      ],
    },
    qa: [
      { question: 'What did Ada paint?', answer: 'the lake', evidence: ['D1:1'], category: 4 },
      { question: 'What are the names of Ada’s cats?', answer: 'Luna and Oliver', evidence: ['D1:2; D1:3'], category: 1 },
      { question: 'When did Ben start pottery?', answer: 'late May 2023', evidence: ['D:2:01'], category: 2 },
      { question: 'What did Ben sculpt?', answer: 'nothing', evidence: ['D9:9', 'D'], category: 3 },
      { question: 'What is Ada’s dog called?', adversarial_answer: 'Rex', evidence: ['D1:3'], category: 5 },
    ],
  },
];

describe('LoCoMo reader', () => {
  it('reads session dates as UTC', () => {
    assert.equal(parseSessionDate('1:56 pm on 8 May, 2023').toISOString(), '2023-05-08T13:56:00.000Z');
    assert.equal(parseSessionDate('12:09 am on 13 September, 2023').toISOString(), '2023-09-13T00:09:00.000Z');
    assert.throws(() => parseSessionDate('yesterday'), /unreadable session date "yesterday"/);
  });

  it('normalises malformed evidence ids and refuses what names no turn', () => {
    assert.deepEqual(evidenceIds('D8:6; D9:17'), ['D8:6', 'D9:17']);
    assert.deepEqual(evidenceIds('D:11:26'), ['D11:26']);
    assert.deepEqual(evidenceIds('D30:05'), ['D30:5']);
    assert.equal(evidenceIds('D'), null);
  });

  it('turns conversations into turns and scored questions, counting every repair', () => {
    const dir = tmpDir('nc-locomo-read-');
    const file = join(dir, 'sample.json');
    writeFileSync(file, JSON.stringify(SAMPLE));
    const d = readLocomo(file);
    assert.equal(d.turns.length, 5);
    const photo = d.turns.find((t) => t.id === 'conv-x:D1:3')!;
    assert.equal(photo.content, 'Luna and Oliver! [shares a photo: two cats on a sofa]');
    assert.equal(photo.name, 'Ada');
    assert.equal(photo.session_id, 'conv-x:session-1');
    assert.equal(d.turns.find((t) => t.id === 'conv-x:D2:1')!.created_at, '2023-06-02T10:05:00.000Z');
    // category 5 is left out; the question whose every evidence id is bad is counted, not scored
    assert.deepEqual(d.questions.map((q) => q.evidence), [['conv-x:D1:1'], ['conv-x:D1:2', 'conv-x:D1:3'], ['conv-x:D2:1']]);
    assert.equal(d.repairs.normalised.length, 2);
    assert.deepEqual(d.repairs.dropped, ['conv-x: "D9:9" (no such turn)', 'conv-x: "D"']);
    assert.equal(d.repairs.questionsWithoutEvidence, 1);
    assert.equal(readLocomo(file, { captions: false }).turns.find((t) => t.id === 'conv-x:D1:3')!.content, 'Luna and Oliver!');
  });

  it('names what is wrong with a file that is not in LoCoMo format', () => {
    const dir = tmpDir('nc-locomo-bad-');
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([{ sample_id: 'a', qa: [] }]));
    assert.throws(() => readLocomo(file), /not in LoCoMo's format: 0\.conversation/);
  });
});

describe('LoCoMo run', () => {
  it('scores the service and the baselines and writes locomo.json', async () => {
    const dir = tmpDir('nc-locomo-run-');
    const file = join(dir, 'sample.json');
    writeFileSync(file, JSON.stringify(SAMPLE));
    await runLocomo(file, { out: dir, ablation: true, captions: true, roles: 'both-user' });
    const out = JSON.parse(readFileSync(join(dir, 'locomo.json'), 'utf8'));
    for (const name of [COMBINED, ...Object.values(BASELINES)]) {
      assert.equal(out.systems[name].overall.n, 3, name);
      assert.ok(out.systems[name].overall['recall@8'] >= 0 && out.systems[name].overall['recall@8'] <= 1);
      assert.equal(out.systems[name].categories['2 temporal'].n, 1);
      // per conversation too, so a rule can be checked on each conversation separately
      assert.equal(out.systems[name].conversations['conv-x'].n, 3, name);
    }
    // three questions over five turns: anything sharing a word is found
    assert.equal(out.systems[COMBINED].overall['hit@8'], 1);
    assert.equal(out.systems[COMBINED].categories['4 single-hop']['recall@1'], 1);
    assert.ok(Object.keys(out.ablation).includes('long_term'));
    assert.ok(Object.keys(out.ablation).includes('said_by_named'));
    // every question's combined ranking, by question id (turn ids only)
    const rankings = JSON.parse(readFileSync(join(dir, 'locomo-rankings.json'), 'utf8'));
    assert.equal(Object.keys(rankings).length, 3);
    assert.ok(Object.values(rankings).every((ids) => Array.isArray(ids) && ids.every((id) => typeof id === 'string' && id.startsWith('conv-x:'))));
  });
});
