/**
 * A few DOM helpers. Text always goes in as text nodes (never innerHTML): memories are user content,
 * and a stored "<script>" must show as those characters.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing from index.html`);
  return el as T;
}

/** "2025-03-01 14:05" in the viewer's time zone; the full ISO time in the tooltip */
export function when(iso: string | null): HTMLElement {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  const text = Number.isNaN(d.getTime()) ? iso : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return h('time', { datetime: iso, title: iso }, text);
}

export const num = (n: number | null | undefined, digits = 3): string => (n === null || n === undefined ? '—' : n.toFixed(digits).replace(/\.?0+$/, '') || '0');

export function badge(text: string, kind = ''): HTMLElement {
  return h('span', { class: `badge ${kind}`.trim() }, text);
}

let toastTimer: number | undefined;
/** a short message at the bottom of the page (saved, deleted, failed) */
export function toast(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const el = byId('toast');
  el.textContent = message;
  el.className = `toast ${kind}`;
  el.hidden = false;
  window.clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => (el.hidden = true), kind === 'error' ? 8000 : 3000);
}

/** an error as a block in the view */
export function errorBox(err: unknown): HTMLElement {
  const message = err instanceof Error ? err.message : String(err);
  return h('div', { class: 'error', role: 'alert' }, message);
}

export function loading(): HTMLElement {
  return h('p', { class: 'muted' }, 'Loading…');
}
