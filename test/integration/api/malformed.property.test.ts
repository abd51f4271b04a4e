import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { startApi, storeDigest, turn, type Api } from './harness.js';

/**
 * Property: whatever malformed body reaches a write route, the answer is a 4xx in the error format,
 * never a 5xx, and nothing at all is written, edited or deleted. Every generated case is invalid by
 * construction (a valid body with one or more corruptions, or a broken encoding of one).
 */

const MAX_CHARS = 100;
const SESSION = 'prop';
const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

const role = fc.constantFrom('user', 'assistant', 'system', 'tool');
const text = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0 && !/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uD800-\uDFFF]/.test(s));
const validTurn = fc.record(
  {
    role,
    content: text,
    name: fc.string({ maxLength: 20 }).filter((s) => !/[\u0000-\u001F\u007F\uD800-\uDFFF]/.test(s)),
    importance: fc.double({ min: 0, max: 1, noNaN: true }),
    pinned: fc.boolean(),
    metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  },
  { requiredKeys: ['role', 'content'] },
);

/** values that are wrong for a field of the given kind */
const notAString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
const notANumber = fc.oneof(fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }));
const notABoolean = fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null));
const badText = fc.oneof(
  fc.constant(''),
  fc.constantFrom(' ', '\n\t ', '   '),
  fc.integer({ min: MAX_CHARS + 1, max: MAX_CHARS * 3 }).map((n) => 'x'.repeat(n)),
  fc.tuple(text, fc.constantFrom('\u0000', '\u0007', '\u001b', '\u007f', '\uD800', '\uDFFF'), text).map(([a, c, b]) => a + c + b),
  notAString,
);

type Corruption = [string, fc.Arbitrary<unknown>];
const TURN_CORRUPTIONS: Corruption[] = [
  ['role', fc.oneof(fc.string({ maxLength: 10 }).filter((s) => !['user', 'assistant', 'system', 'tool'].includes(s)), notAString)],
  ['content', badText],
  ['importance', fc.oneof(fc.double({ min: 1.0000001, max: 1e9, noNaN: true }), fc.double({ min: -1e9, max: -1e-9, noNaN: true }), notANumber)],
  ['pinned', notABoolean],
  ['created_at', fc.oneof(fc.constantFrom('yesterday', '2024-13-01T00:00:00Z', '2024-01-01', ''), notAString)],
  ['id', fc.oneof(fc.constantFrom('', 'a/b', '../x', 'sp ace', 'é', 'x'.repeat(129)), notAString)],
  ['name', fc.oneof(fc.constant('n'.repeat(129)), notAString)],
  ['metadata', fc.oneof(fc.array(fc.integer(), { maxLength: 2 }), fc.string({ maxLength: 5 }), fc.integer(), fc.constant('m'.repeat(9000)).map((s) => ({ big: s })))],
  ['user_id', fc.oneof(fc.constant(''), fc.constant('u'.repeat(129)), notAString)],
  ['session_id', fc.oneof(fc.constantFrom('another-session', ''), notAString)],
  ['colour', fc.jsonValue({ maxDepth: 1 })], // an unknown field
];

const corrupt = (corruptions: Corruption[]) => (base: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(base, fc.uniqueArray(fc.constantFrom(...corruptions), { minLength: 1, maxLength: 3, selector: (c) => c[0] }))
    .chain(([b, cs]) => fc.tuple(...cs.map(([field, bad]) => bad.map((v) => [field, v] as const))).map((pairs) => ({ ...b, ...Object.fromEntries(pairs) })));

const badTurn = corrupt(TURN_CORRUPTIONS)(validTurn);

/** a JSON text with its meaning broken: truncated, not JSON at all, or not an object */
const brokenEncoding = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof(
    valid.map((v) => JSON.stringify(v)).chain((s) => fc.integer({ min: 0, max: Math.max(0, s.length - 2) }).map((n) => s.slice(0, n))),
    fc.string({ maxLength: 30 }).filter((s) => {
      try {
        const v = JSON.parse(s);
        return typeof v !== 'object' || v === null || Array.isArray(v);
      } catch {
        return true;
      }
    }),
    fc.constantFrom('null', '[]', '[{}]', '"turn"', '42', 'true', '{"a":1,}', "{'role':'user'}", '{"role":"user","content":"x"}}'),
    // valid JSON, nested past any sane depth
    fc.integer({ min: 65, max: 3000 }).map((n) => `{"role":"user","content":"x","metadata":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`),
  );

interface Case {
  method: string;
  path: string;
  raw?: string;
  body?: unknown;
  contentType?: string;
}

const turnsCases: fc.Arbitrary<Case> = fc.oneof(
  badTurn.map((body) => ({ method: 'POST', path: `/sessions/${SESSION}/turns`, body })),
  // a batch with good turns around the bad ones: all or nothing
  fc
    .tuple(fc.array(validTurn, { maxLength: 5 }), fc.array(badTurn, { minLength: 1, maxLength: 3 }), fc.array(validTurn, { maxLength: 5 }))
    .map(([a, bad, b]) => ({ method: 'POST', path: `/sessions/${SESSION}/turns`, body: { turns: [...a, ...bad, ...b] } })),
  fc.oneof(fc.constant([]), fc.array(validTurn, { minLength: 1, maxLength: 2 }).map((t) => ({ turns: t, extra: 1 }))).map((body) => ({
    method: 'POST',
    path: `/sessions/${SESSION}/turns`,
    body: Array.isArray(body) ? { turns: body } : body,
  })),
  brokenEncoding(validTurn).map((raw) => ({ method: 'POST', path: `/sessions/${SESSION}/turns`, raw })),
  validTurn.map((t) => ({ method: 'POST', path: `/sessions/${SESSION}/turns`, raw: JSON.stringify(t), contentType: 'text/plain' })),
  fc.constantFrom('s'.repeat(129), '%ZZ', '%C0%AF').map((s) => ({ method: 'POST', path: `/sessions/${s}/turns`, body: turn('fine') })),
);

const validPatch = fc.record({ content: text, importance: fc.double({ min: 0, max: 1, noNaN: true }), pinned: fc.boolean() }, { requiredKeys: [] });
const PATCH_CORRUPTIONS: Corruption[] = [
  ['content', badText],
  ['importance', fc.oneof(fc.double({ min: 1.0000001, max: 1e9, noNaN: true }), fc.double({ min: -1e9, max: -1e-9, noNaN: true }), notANumber)],
  ['pinned', notABoolean],
  ['kind', fc.constantFrom('summary', 'archive')],
  ['user_id', fc.string({ maxLength: 8 })],
];
const patchCases = (id: () => string): fc.Arbitrary<Case> =>
  fc.oneof(
    corrupt(PATCH_CORRUPTIONS)(validPatch).map((body) => ({ method: 'PATCH', path: `/memory/${id()}`, body })),
    fc.constant({ method: 'PATCH', path: `/memory/${id()}`, body: {} }),
    brokenEncoding(validPatch).map((raw) => ({ method: 'PATCH', path: `/memory/${id()}`, raw })),
    fc.constantFrom('a%2Fb', 'x'.repeat(129), '%20', 'a%00b', '%E2%82').map((bad) => ({ method: 'PATCH', path: `/memory/${bad}`, body: { importance: 0.5 } })),
  );

const validPrune = fc.record({ older_than_days: fc.double({ min: 0.001, max: 1000, noNaN: true }), below_importance: fc.double({ min: 0, max: 1, noNaN: true }) }, { requiredKeys: [] });
const PRUNE_CORRUPTIONS: Corruption[] = [
  ['older_than_days', fc.oneof(fc.double({ min: -1e6, max: 0, noNaN: true }), fc.double({ min: 36_501, max: 1e12, noNaN: true }), notANumber)],
  ['below_importance', fc.oneof(fc.double({ min: 1.0000001, max: 1e9, noNaN: true }), fc.double({ min: -1e9, max: -1e-9, noNaN: true }), notANumber)],
  ['session_id', fc.oneof(fc.constant(''), fc.constant('s'.repeat(129)), notAString)],
  ['user_id', fc.oneof(fc.constant(''), fc.constant('u'.repeat(129)), notAString)],
  ['everything', fc.constant(true)],
];
const pruneCases: fc.Arbitrary<Case> = fc.oneof(
  corrupt(PRUNE_CORRUPTIONS)(validPrune).map((body) => ({ method: 'POST', path: '/memory/prune', body })),
  fc.option(fc.constant('default'), { nil: undefined }).map((u) => ({ method: 'POST', path: '/memory/prune', body: u ? { user_id: u } : {} })),
  brokenEncoding(validPrune).map((raw) => ({ method: 'POST', path: '/memory/prune', raw })),
);

const deleteCases: fc.Arbitrary<Case> = fc.oneof(
  fc.string({ minLength: 1, maxLength: 150 }).map((s) => ({ method: 'DELETE', path: `/memory/${encodeURIComponent(s)}` })),
  fc.constantFrom('%', '%ZZ', 'a%2F..%2Fb', '..%2F..%2Fetc', '%00').map((s) => ({ method: 'DELETE', path: `/memory/${s}` })),
);

describe('malformed bodies on every write route (property)', () => {
  let api: Api;
  let ids: string[] = [];
  before(async () => {
    api = await startApi({ max_turn_chars: MAX_CHARS, max_body_bytes: 8 * 1024 });
    const r = await api.request('POST', `/sessions/${SESSION}/turns`, {
      body: { turns: [turn('an entry to aim at', { created_at: '2020-01-01T00:00:00Z', importance: 0.35 }), turn('another entry', { pinned: true })] },
    });
    assert.equal(r.status, 202);
    ids = r.json.ids;
    await api.memory.idle();
  });
  after(() => api.close());

  async function check(c: Case): Promise<void> {
    const before = await storeDigest(api);
    const headers: Record<string, string> = c.raw !== undefined || c.body !== undefined ? { 'content-type': c.contentType ?? 'application/json' } : {};
    const r = await api.request(c.method, c.path, {
      headers,
      ...(c.raw !== undefined ? { raw: c.raw } : c.body !== undefined ? { raw: JSON.stringify(c.body) } : {}),
    });
    assert.ok(r.status >= 400 && r.status < 500, `${c.method} ${c.path} ${c.raw ?? JSON.stringify(c.body)} → ${r.status} ${r.text}`);
    assert.equal(typeof r.json?.error?.code, 'string', r.text);
    assert.equal(typeof r.json.error.message, 'string');
    assert.equal(await storeDigest(api), before, `${c.method} ${c.path} changed the store`);
  }

  const routes: Array<[string, () => fc.Arbitrary<Case>]> = [
    ['POST /sessions/:session_id/turns', () => turnsCases],
    ['PATCH /memory/:id', () => patchCases(() => ids[0]!)],
    ['POST /memory/prune', () => pruneCases],
    ['DELETE /memory/:id', () => deleteCases],
  ];
  for (const [name, cases] of routes) {
    test(`${name}: always 4xx, never 5xx, never a partial write`, async () => {
      await fc.assert(fc.asyncProperty(cases(), check), { numRuns: RUNS });
    });
  }
});
