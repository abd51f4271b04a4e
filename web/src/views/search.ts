import { api } from '../api.js';
import type { ViewContext } from '../context.js';
import { errorBox, h, loading, replace } from '../dom.js';
import { entryTable } from '../entries.js';
import { href } from '../route.js';
import type { MemoryEntry } from '../types.js';
import { field, userSelect } from './forms.js';

const LIMIT = 100;

/** #/search?user=&q=&session=: substring search over a user's long-term entries (`%` and `_` match themselves). */
export async function searchView(ctx: ViewContext, el: HTMLElement, params: URLSearchParams): Promise<void> {
  const q = params.get('q') ?? '';
  const session = params.get('session') ?? '';
  const user = await userSelect(ctx, params.get('user'));
  const query = h('input', { name: 'q', type: 'search', required: true, placeholder: 'text to find', 'aria-label': 'search text', value: q });
  const sessionInput = h('input', { name: 'session', type: 'text', placeholder: 'any session', 'aria-label': 'session', value: session });
  const form = h(
    'form',
    { class: 'query-form', role: 'search' },
    field('User', user),
    field('Contains', query, 'grow'),
    field('Session', sessionInput),
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next = href(['search'], { user: user.value, q: query.value, session: sessionInput.value.trim() });
    if (location.hash === next) ctx.rerender();
    else location.hash = next;
  });
  const results = h('div', { 'data-testid': 'search-results' });
  replace(el, h('h1', {}, 'Search'), h('p', { class: 'muted' }, 'Substring search of the long-term entries, newest first.'), form, results);
  if (!q) {
    query.focus();
    return;
  }
  replace(results, loading());
  try {
    const { entries } = await api.get<{ entries: MemoryEntry[] }>('/memory/search', { q, user_id: user.value, session_id: session || undefined, limit: LIMIT });
    replace(
      results,
      h('p', { class: 'muted' }, `${entries.length}${entries.length === LIMIT ? '+' : ''} ${entries.length === 1 ? 'entry contains' : 'entries contain'} “${q}”.`),
      entryTable(entries, () => ctx.rerender(), { showSession: true }),
    );
  } catch (err) {
    replace(results, errorBox(err));
  }
}
