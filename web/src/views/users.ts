import { api } from '../api.js';
import type { ViewContext } from '../context.js';
import { badge, errorBox, h, loading, replace, when } from '../dom.js';
import { entryTable } from '../entries.js';
import { href } from '../route.js';
import type { InspectedEntry, SessionSummary } from '../types.js';

/** #/users: the users this key may see, with their counts. */
export async function usersView(ctx: ViewContext, el: HTMLElement): Promise<void> {
  replace(el, h('h1', {}, 'Users'), loading());
  const users = await ctx.users(true);
  const scope = ctx.who.users === null ? 'Every user with stored memories.' : `The users this key is bound to: ${ctx.who.users.join(', ')}.`;
  const rows = users.map((u) =>
    h(
      'tr',
      { 'data-user': u.user_id },
      h('td', {}, h('a', { href: href(['users', u.user_id]) }, u.user_id)),
      h('td', { class: 'num' }, u.sessions),
      h('td', { class: 'num' }, u.turns),
      h('td', { class: 'num' }, u.entries),
      h('td', {}, when(u.last_at)),
    ),
  );
  replace(
    el,
    h('h1', {}, 'Users'),
    h('p', { class: 'muted' }, scope),
    users.length === 0
      ? h('p', { class: 'muted empty' }, 'No memories stored yet.')
      : h(
          'table',
          { class: 'grid', 'data-testid': 'users' },
          h('thead', {}, h('tr', {}, h('th', {}, 'User'), h('th', {}, 'Sessions'), h('th', {}, 'Turns'), h('th', {}, 'Long-term entries'), h('th', {}, 'Last activity'))),
          h('tbody', {}, ...rows),
        ),
  );
}

/** #/users/<user>: that user's sessions. */
export async function sessionsView(ctx: ViewContext, el: HTMLElement, user: string): Promise<void> {
  const title = h('h1', {}, h('a', { href: '#/users' }, 'Users'), ' / ', user);
  replace(el, title, loading());
  const { sessions } = await api.get<{ sessions: SessionSummary[] }>('/inspect/sessions', { user_id: user });
  const rows = sessions.map((s) =>
    h(
      'tr',
      { 'data-session': s.session_id },
      h('td', {}, h('a', { href: href(['sessions', user, s.session_id]) }, s.session_id), ' ', s.live ? badge('live', 'on') : null),
      h('td', { class: 'num' }, s.turns),
      h('td', { class: 'num' }, s.entries),
      h('td', {}, when(s.first_at)),
      h('td', {}, when(s.last_at)),
    ),
  );
  replace(
    el,
    title,
    h(
      'p',
      { class: 'toolbar' },
      h('a', { class: 'button', href: href(['search'], { user }) }, 'Search this user'),
      h('a', { class: 'button', href: href(['retrieve'], { user }) }, 'Try a retrieval'),
    ),
    sessions.length === 0
      ? h('p', { class: 'muted empty' }, 'No sessions.')
      : h(
          'table',
          { class: 'grid', 'data-testid': 'sessions' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Session'), h('th', {}, 'Turns'), h('th', {}, 'Long-term entries'), h('th', {}, 'First'), h('th', {}, 'Last'))),
          h('tbody', {}, ...rows),
        ),
    h('p', { class: 'muted small' }, '“live”: the short-term tier still holds the session (it has not expired).'),
  );
}

/** #/sessions/<user>/<session>: every memory of the session and where it lives. */
export async function sessionView(ctx: ViewContext, el: HTMLElement, user: string, session: string): Promise<void> {
  const title = h('h1', {}, h('a', { href: '#/users' }, 'Users'), ' / ', h('a', { href: href(['users', user]) }, user), ' / ', session);
  replace(el, title, loading());
  try {
    const { entries } = await api.get<{ entries: InspectedEntry[] }>(`/inspect/sessions/${encodeURIComponent(session)}/entries`, { user_id: user });
    const counts = { turn: 0, summary: 0, archive: 0 };
    for (const e of entries) counts[e.kind]++;
    replace(
      el,
      title,
      h(
        'p',
        { class: 'toolbar' },
        h('span', { class: 'muted' }, `${entries.length} memories: ${counts.turn} turns, ${counts.summary} summaries, ${counts.archive} archives`),
        h('a', { class: 'button', href: href(['retrieve'], { user, session }) }, 'Retrieve in this session'),
      ),
      h('div', { 'data-testid': 'session-entries' }, entryTable(entries, () => ctx.rerender())),
      h(
        'p',
        { class: 'muted small' },
        'Tiers: log = the turn log (the durable record); short = the short-term tier; semantic = a vector under the current embedder; long = the long-term store.',
      ),
    );
  } catch (err) {
    replace(el, title, errorBox(err));
  }
}
