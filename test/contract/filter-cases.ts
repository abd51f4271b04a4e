import { matchesFilter, RetrieveFiltersSchema, type Filterable, type RecordFilter, type RecordFilterInput } from '../../src/domain/filters.js';
import type { Kind } from '../../src/domain/entry.js';
import type { Role } from '../../src/domain/turn.js';

/**
 * Shared cases for retrieval filters: twelve memories of one user that differ in session, role, kind,
 * time and metadata, and filters over each field. Every tier's contract suite writes the records,
 * applies each filter with a small k, and compares with `matchesFilter` (the reference meaning): a
 * tier that filtered after its cut to k would return fewer than k where more than k match.
 */
export interface FilterRecord extends Filterable {
  /** 0 is the best match of every query the suites send, 11 the worst */
  rank: number;
  metadata: Record<string, unknown> | null;
}

export const FILTER_RECORDS: readonly FilterRecord[] = Array.from({ length: 12 }, (_, i) => ({
  rank: i,
  session_id: `s${i % 3}`,
  role: (i % 2 === 0 ? 'user' : 'assistant') as Role,
  kind: (i % 4 === 3 ? 'summary' : 'turn') as Kind,
  created_at: new Date(Date.UTC(2026, 0, 1 + i, 12)).toISOString(),
  metadata: i === 5 ? null : i === 10 ? { n: '3', topic: 'home' } : { topic: i % 3 === 0 ? 'work' : 'home', n: i, flag: i % 2 === 0, rating: i + 0.5 },
}));

const CASES: Array<[string, RecordFilterInput]> = [
  ['metadata equality', { metadata: { topic: 'work' } }],
  ['metadata in, and a boolean', { metadata: { topic: { in: ['work', 'home'] }, flag: true } }],
  ['metadata number is type-strict ("3" is not 3)', { metadata: { n: 3 } }],
  ['metadata fractional number', { metadata: { rating: { in: [2.5, 9.5] } } }],
  ['metadata key nobody has', { metadata: { missing: 'x' } }],
  ['session_ids', { session_ids: ['s1', 's2'] }],
  ['roles', { roles: ['assistant'] }],
  ['kinds', { kinds: ['summary'] }],
  ['created_after / created_before (inclusive / exclusive)', { created_after: '2026-01-04T12:00:00.000Z', created_before: '2026-01-09T12:00:00+00:00' }],
  ['everything at once', { roles: ['user'], metadata: { topic: 'home' }, created_after: '2026-01-02T00:00:00Z', session_ids: ['s1', 's2'] }],
];

export const FILTER_CASES: ReadonlyArray<{ name: string; filter: RecordFilter; matching: FilterRecord[] }> = CASES.map(([name, input]) => {
  const filter = RetrieveFiltersSchema.parse(input);
  return { name, filter, matching: FILTER_RECORDS.filter((r) => matchesFilter(r, filter)) };
});

/**
 * For the query-plan tests (every backend's filtered text search): each filter kind alone — the
 * shared cases test created_after and created_before only together — and every kind at once. A
 * planner may drive a search from a different index for each of them (user and time from either
 * side, user and session, user and kind), so each is looked at on its own.
 */
export const PLAN_FILTER_CASES: ReadonlyArray<{ name: string; filter: RecordFilter }> = [
  ...FILTER_CASES,
  ...([
    ['created_after alone', { created_after: '2026-01-03T00:00:00Z' }],
    ['created_before alone', { created_before: '2026-01-11T00:00:00Z' }],
    ['kinds, turns only', { kinds: ['turn'] }],
    ['every kind at once', {
      metadata: { topic: 'home' }, session_ids: ['s1', 's2'], roles: ['assistant'], kinds: ['turn'], created_after: '2026-01-02T00:00:00Z', created_before: '2026-01-12T00:00:00Z',
    }],
  ] as Array<[string, RecordFilterInput]>).map(([name, input]) => ({ name, filter: RetrieveFiltersSchema.parse(input) })),
];
