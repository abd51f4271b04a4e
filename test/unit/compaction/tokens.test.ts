import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TOKENS_PER_MESSAGE, TOKENS_REPLY_PRIMING, TokenCounter } from '../../../src/compaction/tokens.js';

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
