import { api, ApiError, keyStore } from './api.js';
import type { ViewContext } from './context.js';
import { byId, errorBox, h, replace } from './dom.js';
import { parseHash, tabOf } from './route.js';
import type { UserSummary, WhoAmI } from './types.js';
import { loginView } from './views/login.js';
import { retrieveView } from './views/retrieve.js';
import { searchView } from './views/search.js';
import { statusView } from './views/status.js';
import { sessionsView, sessionView, usersView } from './views/users.js';

const main = byId('main');
const nav = byId('nav');
const who = byId('who');

let ctx: ViewContext | null = null;
/** a newer navigation makes an older, slower render drop its result */
let renderSeq = 0;

function makeContext(me: WhoAmI): ViewContext {
  let users: Promise<UserSummary[]> | null = null;
  return {
    who: me,
    users(fresh = false) {
      if (fresh || !users) {
        users = api.get<{ users: UserSummary[] }>('/inspect/users').then((r) => r.users);
        users.catch(() => (users = null));
      }
      return users;
    },
    rerender: () => void render(),
  };
}

function showIdentity(me: WhoAmI): void {
  const scope = me.users === null ? (me.keys_enabled ? 'admin key' : 'no keys configured') : `key for ${me.users.join(', ')}`;
  replace(
    who,
    h('span', { class: 'muted', 'data-testid': 'scope' }, scope),
    me.keys_enabled ? h('button', { type: 'button', class: 'small secondary', onclick: signOut }, 'Forget key') : null,
  );
  nav.hidden = false;
}

function signOut(): void {
  keyStore.clear();
  ctx = null;
  nav.hidden = true;
  replace(who);
  start();
}

async function render(): Promise<void> {
  if (!ctx) return;
  const seq = ++renderSeq;
  const route = parseHash(location.hash);
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.view === tabOf(route.view));
  // each view renders into a fresh container; a stale one (the user navigated on) is never attached
  const view = h('div', { class: 'view', 'data-view': route.view });
  replace(main, view);
  try {
    switch (route.view) {
      case 'users':
        return await usersView(ctx, view);
      case 'sessions':
        return await sessionsView(ctx, view, route.parts[0]!);
      case 'session':
        return await sessionView(ctx, view, route.parts[0] ?? '', route.parts[1] ?? '');
      case 'search':
        return await searchView(ctx, view, route.params);
      case 'retrieve':
        return await retrieveView(ctx, view, route.params);
      case 'status':
        return await statusView(ctx, view);
    }
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return signOut();
    if (seq === renderSeq) view.append(errorBox(err));
  }
}

const NEEDS_KEY = 'This server needs an API key.';

/** Checks the stored key (or none) with the server; resolves with what it may see, throws a readable error otherwise. */
async function identify(): Promise<WhoAmI> {
  try {
    return await api.get<WhoAmI>('/inspect/whoami');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw new Error(keyStore.get() ? 'The server does not know this key.' : NEEDS_KEY);
    throw err;
  }
}

async function begin(me: WhoAmI): Promise<void> {
  ctx = makeContext(me);
  showIdentity(me);
  await render();
}

async function submitKey(key: string): Promise<void> {
  keyStore.set(key);
  let me: WhoAmI;
  try {
    me = await identify();
  } catch (err) {
    keyStore.clear();
    throw err;
  }
  await begin(me);
}

/** Opens with the key of this tab's session, or asks for one (quietly the first time). */
function start(): void {
  const hadKey = keyStore.get() !== null;
  identify()
    .then(begin)
    .catch((err: unknown) => {
      keyStore.clear();
      const message = err instanceof Error ? err.message : String(err);
      loginView(main, submitKey, !hadKey && message === NEEDS_KEY ? undefined : message);
    });
}

window.addEventListener('hashchange', () => void render());
start();
