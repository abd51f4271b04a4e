import { h, replace } from '../dom.js';

/**
 * Asks for the API key. `submit` checks it with the server; what it throws is shown under the field.
 * The key is kept in sessionStorage by the caller, only once it works.
 */
export function loginView(el: HTMLElement, submit: (key: string) => Promise<void>, message?: string): void {
  const key = h('input', { name: 'api_key', type: 'password', autocomplete: 'off', required: true, 'aria-label': 'API key', placeholder: 'Bearer key from api_keys' });
  const error = h('p', { class: 'error', role: 'alert', hidden: !message }, message ?? '');
  const button = h('button', { type: 'submit', class: 'primary' }, 'Open');
  const form = h(
    'form',
    { class: 'login' },
    h('h1', {}, 'Memory inspector'),
    h('p', { class: 'muted' }, 'Enter an API key. It is kept in this browser tab only (sessionStorage) and sent to this server alone.'),
    h('label', { class: 'field' }, h('span', {}, 'API key'), key),
    error,
    button,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    button.disabled = true;
    error.hidden = true;
    submit(key.value.trim()).catch((err: unknown) => {
      error.textContent = err instanceof Error ? err.message : String(err);
      error.hidden = false;
      button.disabled = false;
      key.select();
    });
  });
  replace(el, form);
  key.focus();
}
