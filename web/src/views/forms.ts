import type { ViewContext } from '../context.js';
import { h } from '../dom.js';

/** A <select> of the users the key may see, with `selected` chosen (else the key's default user, else the first). */
export async function userSelect(ctx: ViewContext, selected: string | null): Promise<HTMLSelectElement> {
  const users = (await ctx.users()).map((u) => u.user_id);
  const fallback = users.includes(ctx.who.default_user) ? ctx.who.default_user : users[0];
  const current = selected ?? fallback ?? ctx.who.default_user;
  if (!users.includes(current)) users.unshift(current);
  const select = h('select', { name: 'user', 'aria-label': 'user' }, ...users.map((u) => h('option', { value: u }, u)));
  select.value = current;
  return select;
}

export function field(label: string, control: HTMLElement, extra = ''): HTMLElement {
  return h('label', { class: `field ${extra}`.trim() }, h('span', {}, label), control);
}
