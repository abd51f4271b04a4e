import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { describe, it } from 'node:test';
import { setImmediate as setImmediateP } from 'node:timers/promises';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { POPS_PER_TURN, TOKENS_PER_MESSAGE, TOKENS_REPLY_PRIMING, TokenCounter } from '../../../src/compaction/tokens.js';
import { mulberry32 } from '../../fixtures/random.js';
import { merging, mergingPerTurn } from '../../helpers/event-loop.js';
import { worstInputs } from '../../fixtures/token-worst.js';

/** js-tiktoken's own encode: the reference the counter must equal (slow on long unknown pieces, so only on short texts here) */
const reference = new Tiktoken(cl100k);
const referenceCount = (text: string) => reference.encode(text, [], []).length;

/** text mixing ASCII, whitespace of every kind, Cyrillic, CJK and emoji, from a seed */
function mixedText(rnd: () => number, length: number): string {
  const pools = [' \t\n\r\u00a0\u200b\u3000', 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', "0123456789.,;:!?'\"()[]{}<>-_=+*/\\@#$%^&|~`", 'абвгдежзийклмнопрстуфхцчшщыэюя', '的一是不了人我在有他这为之大来以个中上们', '😀🎉👍🏽🇵🇹é́'];
  let s = '';
  while (s.length < length) {
    const pool = pools[Math.floor(rnd() * pools.length)]!;
    const chars = [...pool];
    const run = 1 + Math.floor(rnd() * 12);
    for (let i = 0; i < run; i++) s += chars[Math.floor(rnd() * chars.length)]!;
  }
  return s;
}

describe('TokenCounter (cl100k_base, offline)', () => {
  const tokens = new TokenCounter();

  it('counts tokens as the cl100k_base BPE does, not characters over four', () => {
    // reference counts from OpenAI's tiktoken for cl100k_base
    assert.equal(tokens.count('hello world'), 2);
    assert.equal(tokens.count('tiktoken is great!'), 6);
    assert.equal(tokens.count(''), 0);
    // a long run of one digit is far from length / 4
    const digits = '1'.repeat(300);
    assert.equal(tokens.count(digits), 100);
  });

  it("counts exactly as js-tiktoken's encode on mixed scripts, whitespace runs and long unknown pieces", () => {
    const rnd = mulberry32(2025);
    for (let i = 0; i < 400; i++) {
      const text = mixedText(rnd, 1 + Math.floor(rnd() * 300));
      assert.equal(new TokenCounter().count(text), referenceCount(text), JSON.stringify(text));
    }
    // each kind of the worst inputs, at lengths the reference still finishes in well under a second
    for (const text of ['x'.repeat(1000), '\u200b'.repeat(200), '\t'.repeat(800), ' '.repeat(800) + 'a', '\n'.repeat(800), '😀'.repeat(100), '漢'.repeat(300), 'Note: ' + '\u200b'.repeat(150)]) {
      assert.equal(new TokenCounter().count(text), referenceCount(text), `${JSON.stringify(text.slice(0, 8))} × ${text.length}`);
    }
  });

  // the timeout guards against a hang (js-tiktoken's encode never ends on the tab run), it times nothing
  it('counts the 32,000-character inputs that stalled the reference (x, U+200B, tab …) with a sane count', { timeout: 60_000 }, () => {
    const tokens = new TokenCounter();
    const counts = Object.fromEntries(Object.entries(worstInputs()).map(([name, text]) => [name, tokens.count(text)]));
    for (const [name, text] of Object.entries(worstInputs())) {
      const bytes = Buffer.byteLength(text, 'utf8');
      // never above the byte bound sessionAtMost relies on; never below one token per 128 bytes (cl100k's longest tokens)
      assert.ok(counts[name]! <= bytes && counts[name]! >= bytes / 128, `${name}: ${counts[name]} tokens for ${bytes} bytes`);
    }
    // x's merge into tokens of 8 (the reference counts 'x' × 1,000 as 125): exactly an eighth
    assert.equal(referenceCount('x'.repeat(1000)), 125);
    assert.equal(counts['x × 32,000'], 4000);
    // a run is cut alike however long it is: the 32,000-character count is the short one's, scaled
    const run = (ch: string, n: number) => tokens.count(`Note: ${ch.repeat(n)}`);
    for (const ch of ['\u200b', '\t', ' ', '\n', '😀', '漢']) {
      assert.equal(run(ch, 160) - run(ch, 80), referenceCount(`Note: ${ch.repeat(160)}`) - referenceCount(`Note: ${ch.repeat(80)}`), `${JSON.stringify(ch)}: the reference's growth`);
    }
  });

  it('truncates exactly where decoding js-tiktoken’s first tokens would', () => {
    const rnd = mulberry32(7);
    for (let i = 0; i < 200; i++) {
      const text = mixedText(rnd, 40 + Math.floor(rnd() * 200));
      const max = Math.floor(rnd() * 40);
      const ids = reference.encode(text, [], []);
      const expected = ids.length <= max ? text : reference.decode(ids.slice(0, max)).replace(/\uFFFD+$/, '');
      assert.equal(new TokenCounter().truncate(text, max), expected, JSON.stringify([text, max]));
    }
  });

  // issue 25: a compaction's transcript cuts each long turn to its share; counting the text whole and
  // then cutting the piece the cut falls in merged a 32,000-character run three times in one call
  it('truncates a 32,000-character text with no more merging than counting it once', () => {
    for (const [name, text] of Object.entries(worstInputs())) {
      const once = merging(() => new TokenCounter().count(text));
      for (const max of [0, 100, 1000]) {
        const tokens = new TokenCounter();
        let cut = '';
        const work = merging(() => (cut = tokens.truncate(text, max)));
        assert.ok(work <= once, `${name} cut to ${max}: ${work} pops, a count ${once}`);
        assert.ok(text.startsWith(cut) && tokens.count(cut) <= max, `${name} cut to ${max}`);
      }
      // a text that fits is walked once, and one already counted is not walked again
      const tokens = new TokenCounter();
      const bytes = Buffer.byteLength(text, 'utf8');
      const work = merging(() => {
        assert.equal(tokens.truncate(text, bytes), text);
        assert.equal(tokens.truncate(text, tokens.count(text)), text);
      });
      assert.ok(work <= once, `${name} whole: ${work} pops, a count ${once}`);
    }
  });

  // issue 25: one 32,000-character run is one piece; merged whole it held the event loop 15–30 ms (more
  // on a loaded machine), and a /chat counted its message, its reply, then each again for a compaction
  it('countSoon and truncateSoon answer as count and truncate, merging at most POPS_PER_TURN per turn of the event loop', async () => {
    const texts = [...Object.values(worstInputs()), mixedText(mulberry32(11), 32_000)];
    let most = 0;
    let turns = 0;
    for (const text of texts) {
      const expected = new TokenCounter().count(text);
      const cuts = [0, 100, 1000, expected].map((max) => new TokenCounter().truncate(text, max));
      const seen = await mergingPerTurn(async () => {
        // a turn between the calls: each call's slices are its own, two calls in a row share a turn
        assert.equal(await new TokenCounter().countSoon(text), expected);
        for (const [i, max] of [0, 100, 1000, expected].entries()) {
          await setImmediateP();
          assert.equal(await new TokenCounter().truncateSoon(text, max), cuts[i]);
        }
        await setImmediateP();
        // what countSoon counted, count reads back without merging
        const tokens = new TokenCounter();
        await tokens.countSoon(text);
        assert.equal(merging(() => tokens.count(text)), 0);
      });
      most = Math.max(most, seen.most);
      turns += seen.turns;
    }
    // a short piece's merge (at most 64 characters) may finish a turn's work
    assert.ok(most <= POPS_PER_TURN + 1_024, `${most} pops in one turn of the event loop`);
    assert.ok(turns > texts.length * 10, `${turns} turns`);
  });

  it('treats special-token markers in user text as plain text', () => {
    assert.ok(tokens.count('<|endoftext|> and <|im_start|>') > 2);
  });

  it('adds the chat framing per message, per name and for the reply', () => {
    assert.equal(tokens.message('hello world'), TOKENS_PER_MESSAGE + 2);
    assert.equal(tokens.message('hello world', 'Ada'), TOKENS_PER_MESSAGE + 2 + 1 + tokens.count('Ada'));
    assert.equal(tokens.session([]), TOKENS_REPLY_PRIMING);
    const turns = [
      { content: 'hello world', name: null },
      { content: 'tiktoken is great!', name: 'Ada' },
    ];
    assert.equal(tokens.session(turns), TOKENS_REPLY_PRIMING + tokens.turn(turns[0]!) + tokens.turn(turns[1]!));
  });

  it('gives the same count for the same text however often it is asked (cached by digest)', () => {
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const first = tokens.count(long);
    assert.equal(tokens.count(long), first);
    assert.equal(first, new TokenCounter().count(long));
  });

  // a compaction sums one session several times: each sum digested every long turn again
  it('counts a long text seen lately again without reading it through a digest, up to a bound', (t) => {
    const digests = t.mock.method(crypto, 'createHash');
    syncBuiltinESMExports();
    try {
      const counter = new TokenCounter();
      const rnd = mulberry32(11);
      const words = ['the', 'budget', 'we', 'set', 'for', 'March', 'was', '1,200', 'euros', 'and', 'rent', 'took', 'half', 'of', 'it.'];
      const prose = () => Array.from({ length: 6_000 }, () => words[Math.floor(rnd() * words.length)]).join(' ').slice(0, 32_000);
      const turns = Array.from({ length: 30 }, () => ({ content: prose(), name: null }));
      const total = counter.session(turns);
      const digested = digests.mock.callCount();
      assert.equal(digested, 30, 'a first count of a long text remembers it by digest, digested once');
      assert.equal(counter.session(turns), total);
      // the same texts read again, as other strings (a session read from the store again)
      assert.equal(counter.session(turns.map((x) => ({ content: (` ${x.content}`).slice(1), name: null }))), total);
      assert.equal(digests.mock.callCount(), digested);
      // texts past the bound (2,000,000 characters) push the oldest out: counted again by digest, the same
      const more = Array.from({ length: 70 }, () => ({ content: prose(), name: null }));
      counter.session(more);
      const expected = new TokenCounter().count(turns[0]!.content);
      const before = digests.mock.callCount();
      assert.equal(counter.count(turns[0]!.content), expected);
      assert.equal(digests.mock.callCount(), before + 1);
    } finally {
      digests.mock.restore();
      syncBuiltinESMExports();
    }
  });

  it('bounds a session from above by its UTF-8 bytes, whatever the script', () => {
    const tokens = new TokenCounter();
    const texts = ['', 'a', 'hello world', 'ok thanks', '<|endoftext|> and <|im_start|>', '数据库的事务隔离级别', 'emoji 🎉🎉 and é́ combining', ' '.repeat(50), 'x'.repeat(5000), '\u0000\u0001 control'];
    for (const content of texts) {
      for (const name of [null, 'Ana', 'Zoë 山田']) {
        const turns = [{ content, name }];
        assert.ok(tokens.sessionAtMost(turns) >= tokens.session(turns), JSON.stringify([content.slice(0, 20), name]));
      }
    }
    const many = texts.map((content, i) => ({ content, name: i % 2 ? 'Ana' : null }));
    assert.ok(tokens.sessionAtMost(many) >= tokens.session(many));
    // a bound, not a count: ASCII words run several bytes per token
    assert.ok(tokens.sessionAtMost([{ content: 'hello world', name: null }]) > tokens.session([{ content: 'hello world', name: null }]));
  });

  it('truncates to at most the given tokens without splitting a character', () => {
    const text = 'Zoë visited Kraków and São Paulo — 東京 too. '.repeat(20);
    const cut = tokens.truncate(text, 25);
    assert.ok(tokens.count(cut) <= 25);
    assert.ok(text.startsWith(cut));
    assert.doesNotMatch(cut, /\uFFFD/);
    assert.equal(tokens.truncate('short', 25), 'short');
  });
});
