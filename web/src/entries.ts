import { api, ApiError, seg } from './api.js';
import { confirmDialog, editDialog } from './dialogs.js';
import { badge, h, num, toast, when } from './dom.js';
import type { DeleteResult, EntryLike, MemoryEntry } from './types.js';

const PREVIEW_CHARS = 160;

function tierBadges(e: EntryLike): HTMLElement {
  // a /memory/search row is a long-term entry; where else it lives is not reported there
  if (!e.tiers) return h('span', { class: 'tiers' }, badge('long-term', 'on'));
  const t = e.tiers;
  const mark = (label: string, on: boolean | null, title: string) =>
    h('span', { class: `badge ${on === null ? 'unknown' : on ? 'on' : 'off'}`, title: on === null ? `${title}: unknown (no embedder loaded)` : `${title}: ${on ? 'yes' : 'no'}` }, label);
  return h(
    'span',
    { class: 'tiers' },
    mark('log', t.turn_log, 'in the turn log'),
    mark('short', t.short_term, 'in the short-term tier'),
    mark('semantic', t.semantic, 'has a vector in the semantic tier'),
    mark('long', t.long_term, 'in the long-term tier'),
    e.pending?.embed ? badge('embed pending', 'warn') : null,
    e.pending?.persist ? badge('persist pending', 'warn') : null,
  );
}

/**
 * A table of memories with their kind, importance, pinned state and tiers, and the edit, pin and
 * delete actions. Edit and pin act on long-term entries (the routes edit those); a turn that was not
 * important enough to be kept long-term can only be deleted. `changed` is called after every
 * successful action so the view can reload what the server now holds.
 */
export function entryTable(entries: readonly EntryLike[], changed: () => void, options: { showSession?: boolean } = {}): HTMLElement {
  if (entries.length === 0) return h('p', { class: 'muted empty' }, 'No memories.');
  const rows = entries.map((e) => {
    const editable = e.tiers ? e.tiers.long_term : true;
    const why = editable ? undefined : 'only long-term entries can be edited or pinned; this turn is in the turn log only';
    const content = e.content.length > PREVIEW_CHARS ? e.content.slice(0, PREVIEW_CHARS) + '…' : e.content;
    return h(
      'tr',
      { 'data-id': e.id, class: e.pinned ? 'pinned' : undefined },
      h('td', { class: 'nowrap' }, when(e.created_at)),
      h('td', { class: 'nowrap' }, e.role, e.name ? h('span', { class: 'muted' }, ` · ${e.name}`) : null, options.showSession ? h('div', { class: 'muted small' }, e.session_id) : null),
      h('td', {}, badge(e.kind, `kind-${e.kind}`)),
      h('td', { class: 'content', title: e.content }, content),
      h('td', { class: 'num', 'data-col': 'importance' }, num(e.importance, 2)),
      h('td', { 'data-col': 'pinned' }, e.pinned ? badge('pinned', 'pin') : h('span', { class: 'muted' }, '—')),
      h('td', {}, tierBadges(e)),
      h(
        'td',
        { class: 'nowrap' },
        h(
          'div',
          { class: 'row-actions' },
          h('button', { type: 'button', class: 'small', disabled: !editable, title: why, onclick: () => void edit(e, changed) }, 'Edit'),
          h('button', { type: 'button', class: 'small', disabled: !editable, title: why, onclick: () => void pin(e, changed) }, e.pinned ? 'Unpin' : 'Pin'),
          h('button', { type: 'button', class: 'small danger', onclick: () => void remove(e, changed) }, 'Delete'),
        ),
      ),
    );
  });
  return h(
    'table',
    { class: 'grid entries' },
    h(
      'thead',
      {},
      h('tr', {}, h('th', {}, 'When'), h('th', {}, 'Who'), h('th', {}, 'Kind'), h('th', {}, 'Content'), h('th', {}, 'Importance'), h('th', {}, 'Pinned'), h('th', {}, 'Tiers'), h('th', {}, '')),
    ),
    h('tbody', {}, ...rows),
  );
}

function failed(what: string, err: unknown): void {
  const msg = err instanceof ApiError ? `${err.message} (${err.code})` : String(err);
  toast(`Could not ${what}: ${msg}`, 'error');
}

/** A memory's path: ids are per user, so the owner goes with the id. */
function byId(e: EntryLike): string {
  return `/memory/${seg(e.id)}?user_id=${encodeURIComponent(e.user_id)}`;
}

async function edit(e: EntryLike, changed: () => void): Promise<void> {
  const patch = await editDialog(e);
  if (!patch) return;
  try {
    await api.patch<MemoryEntry>(byId(e), patch);
    toast('Saved.');
    changed();
  } catch (err) {
    failed('save', err);
  }
}

async function pin(e: EntryLike, changed: () => void): Promise<void> {
  try {
    await api.patch<MemoryEntry>(byId(e), { pinned: !e.pinned });
    toast(e.pinned ? 'Unpinned.' : 'Pinned: never pruned, archived or compacted away.');
    changed();
  } catch (err) {
    failed(e.pinned ? 'unpin' : 'pin', err);
  }
}

async function remove(e: EntryLike, changed: () => void): Promise<void> {
  const preview = e.content.length > 300 ? e.content.slice(0, 300) + '…' : e.content;
  if (!(await confirmDialog('Delete this memory from every tier?', preview, 'Delete'))) return;
  try {
    const r = await api.delete<DeleteResult>(byId(e));
    const from = Object.entries(r.removed)
      .filter(([, v]) => v)
      .map(([k]) => k.replace('_', '-'));
    toast(`Deleted${from.length > 0 ? ` from ${from.join(', ')}` : ''}.`);
    changed();
  } catch (err) {
    failed('delete', err);
  }
}
