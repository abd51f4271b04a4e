import { h } from './dom.js';
import type { EntryLike } from './types.js';

/** Shows a modal <dialog> built by `build`; resolves with what `build`'s `done` is called with (null on Escape). */
function modal<T>(build: (done: (value: T | null) => void) => HTMLElement[], label: string): Promise<T | null> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'dialog', 'aria-label': label });
    let settled = false;
    const done = (value: T | null) => {
      if (settled) return;
      settled = true;
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    dialog.append(...build(done));
    dialog.addEventListener('cancel', () => done(null));
    document.body.append(dialog);
    dialog.showModal();
  });
}

export interface EntryEdit {
  content?: string;
  importance?: number;
}

/** Edit a memory's text and importance; resolves with the changed fields only, or null when cancelled or unchanged. */
export function editDialog(entry: EntryLike): Promise<EntryEdit | null> {
  return modal<EntryEdit>((done) => {
    const content = h('textarea', { name: 'content', rows: 6, required: true, 'aria-label': 'content' });
    content.value = entry.content;
    const importance = h('input', { name: 'importance', type: 'number', min: 0, max: 1, step: 0.01, required: true, 'aria-label': 'importance' });
    importance.value = entry.importance === null ? '' : String(entry.importance);
    const error = h('p', { class: 'error', hidden: true });
    const form = h(
      'form',
      { method: 'dialog', class: 'edit-form' },
      h('h2', {}, 'Edit memory'),
      h('p', { class: 'muted mono' }, entry.id),
      h('label', {}, 'Content', content),
      h('label', {}, 'Importance (0–1)', importance),
      h('p', { class: 'muted' }, 'A changed text is re-embedded; the old vector is removed at once.'),
      error,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => done(null) }, 'Cancel'),
        h('button', { type: 'submit', class: 'primary' }, 'Save'),
      ),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const patch: EntryEdit = {};
      const text = content.value;
      if (text.trim() === '') {
        error.textContent = 'The content must not be empty.';
        error.hidden = false;
        return;
      }
      if (text !== entry.content) patch.content = text;
      const imp = Number(importance.value);
      if (importance.value === '' || !Number.isFinite(imp) || imp < 0 || imp > 1) {
        error.textContent = 'The importance is a number from 0 to 1.';
        error.hidden = false;
        return;
      }
      if (imp !== entry.importance) patch.importance = imp;
      done(Object.keys(patch).length > 0 ? patch : null);
    });
    queueMicrotask(() => content.focus());
    return [form];
  }, 'Edit memory');
}

/** Asks before something that cannot be undone; resolves true only when confirmed. */
export async function confirmDialog(title: string, body: string, confirmLabel: string): Promise<boolean> {
  const answer = await modal<boolean>(
    (done) => [
      h('h2', {}, title),
      h('blockquote', { class: 'quote' }, body),
      h('p', { class: 'muted' }, 'This cannot be undone.'),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => done(false) }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => done(true) }, confirmLabel),
      ),
    ],
    title,
  );
  return answer === true;
}
