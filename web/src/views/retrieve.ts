import { api } from '../api.js';
import type { ViewContext } from '../context.js';
import { badge, errorBox, h, loading, num, replace, when } from '../dom.js';
import { href } from '../route.js';
import { TIERS, type RetrievalResult, type RetrieveResponse, type Tier, type TierReport } from '../types.js';
import { field, userSelect } from './forms.js';

const TIER_LABEL: Record<Tier, string> = { short_term: 'Short-term', semantic: 'Semantic', long_term: 'Long-term' };
const DEFAULT_TOP_K = 8;

/** The parts of a result's score, as the server explains them (src/retrieval/rank.ts has the weights). */
export function explainList(r: RetrievalResult): HTMLElement {
  const e = r.explain;
  const rows: Array<[string, string | HTMLElement]> = [
    ['relevance', num(e.relevance)],
    ['similarity', num(e.similarity)],
    ['BM25', num(e.bm25, 2)],
    ['ranks', Object.entries(e.ranks).map(([t, n]) => `${TIER_LABEL[t as Tier] ?? t} #${n}`).join(', ') || '—'],
    ['fusion', num(e.fusion)],
    ['tier priority', num(e.tier_priority)],
    ['recency', num(e.recency)],
    ['importance', num(e.importance)],
  ];
  if (e.in_period !== null) rows.push(['in the period asked', e.in_period ? `yes${e.period_rank ? ` (#${e.period_rank})` : ''}` : 'no']);
  if (e.context_of) rows.push(['context of', h('code', {}, e.context_of)]);
  if (e.superseded_by) rows.push(['superseded by', h('code', {}, e.superseded_by)]);
  return h('dl', { class: 'explain', 'data-testid': 'explain' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function resultCard(r: RetrievalResult, position: string): HTMLElement {
  return h(
    'article',
    { class: 'result', 'data-id': r.id },
    h(
      'header',
      {},
      h('span', { class: 'pos' }, position),
      h('span', { class: 'score', title: 'score' }, num(r.score)),
      h('span', { class: `badge tier-${r.tier}`, title: 'the tier it is credited to after deduplication by content' }, TIER_LABEL[r.tier]),
      badge(r.kind, `kind-${r.kind}`),
      h('span', { class: 'muted' }, `${r.role}${r.name ? ` · ${r.name}` : ''} · ${r.session_id} · `, when(r.created_at)),
    ),
    h('p', { class: 'result-content' }, r.content),
    h('details', {}, h('summary', {}, 'why: explain'), explainList(r)),
  );
}

function tierCard(tier: Tier, report: TierReport, results: RetrievalResult[]): HTMLElement {
  const status = badge(report.status, report.status === 'ok' ? 'on' : report.status === 'skipped' ? 'unknown' : 'bad');
  const list = results.length === 0 ? h('p', { class: 'muted empty' }, 'Nothing from this tier made the cut.') : h('div', {}, ...results.map((r) => resultCard(r, `#${r.explain.ranks[tier] ?? '·'}`)));
  return h(
    'section',
    { class: 'tier-card', 'data-tier': tier },
    h('h3', {}, TIER_LABEL[tier], ' ', status),
    h('p', { class: 'muted small' }, `${report.backend} · ${report.count} found · ${num(report.ms, 1)} ms`),
    report.error ? h('p', { class: 'error small' }, report.error) : null,
    list,
  );
}

/**
 * A result belongs to each tier that found it (its rank there), ordered by that rank; a turn added as
 * the context of a hit (no rank of its own) is shown under the tier that holds it.
 */
export function groupByTier(results: readonly RetrievalResult[]): Record<Tier, RetrievalResult[]> {
  const groups: Record<Tier, RetrievalResult[]> = { short_term: [], semantic: [], long_term: [] };
  for (const r of results) {
    const found = TIERS.filter((t) => r.explain.ranks[t] !== undefined);
    for (const t of found.length > 0 ? found : [r.tier]) groups[t].push(r);
  }
  for (const t of TIERS) groups[t].sort((a, b) => (a.explain.ranks[t] ?? Infinity) - (b.explain.ranks[t] ?? Infinity));
  return groups;
}

/** #/retrieve?user=&q=&session=&k=: what one retrieval pass would hand the model, and why. */
export async function retrieveView(ctx: ViewContext, el: HTMLElement, params: URLSearchParams): Promise<void> {
  const q = params.get('q') ?? '';
  const session = params.get('session') ?? '';
  const k = Number(params.get('k') ?? DEFAULT_TOP_K) || DEFAULT_TOP_K;
  const user = await userSelect(ctx, params.get('user'));
  const query = h('input', { name: 'query', type: 'search', required: true, placeholder: 'a message the assistant is about to answer', 'aria-label': 'query', value: q });
  const sessionInput = h('input', { name: 'session', type: 'text', placeholder: 'none', 'aria-label': 'session', value: session });
  const topK = h('input', { name: 'top_k', type: 'number', min: 1, max: 100, 'aria-label': 'top k', value: k });
  const form = h(
    'form',
    { class: 'query-form' },
    field('User', user),
    field('Query', query, 'grow'),
    field('Session', sessionInput),
    field('top_k', topK, 'narrow'),
    h('button', { type: 'submit', class: 'primary' }, 'Retrieve'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next = href(['retrieve'], { user: user.value, q: query.value, session: sessionInput.value.trim(), k: topK.value });
    if (location.hash === next) ctx.rerender();
    else location.hash = next;
  });
  const out = h('div', { 'data-testid': 'retrieval' });
  replace(
    el,
    h('h1', {}, 'What would be retrieved'),
    h('p', { class: 'muted' }, 'One retrieval pass over the three tiers, as the chat pipeline runs it before a reply. Nothing is written.'),
    form,
    out,
  );
  if (!q) {
    query.focus();
    return;
  }
  replace(out, loading());
  try {
    const r = await api.post<RetrieveResponse>('/memory/retrieve', { query: q, user_id: user.value, top_k: k, ...(session ? { session_id: session } : {}) });
    const groups = groupByTier(r.results);
    replace(
      out,
      h('h2', {}, 'Tiers'),
      h('div', { class: 'tiers-grid', 'data-testid': 'tiers' }, ...TIERS.map((t) => tierCard(t, r.tiers[t], groups[t]))),
      h('h2', {}, `Ranked results (${r.results.length})`),
      r.results.length === 0 ? h('p', { class: 'muted empty' }, 'Nothing retrieved.') : h('div', { 'data-testid': 'ranked' }, ...r.results.map((x, i) => resultCard(x, String(i + 1)))),
      h('details', { class: 'prompt' }, h('summary', {}, 'Prompt blocks handed to the model'), h('pre', {}, r.prompt_blocks || '(empty)')),
    );
  } catch (err) {
    replace(out, errorBox(err));
  }
}
