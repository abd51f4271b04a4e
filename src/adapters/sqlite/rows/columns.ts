/** A column list with each column under a table alias (`t.id, t.user_id, …`). */
export const underAlias = (columns: string, alias: string): string => columns.split(', ').map((c) => `${alias}.${c}`).join(', ');

/** The named parameters of an INSERT of a column list (`@id, @user_id, …`). */
export const namedValues = (columns: string): string => columns.split(', ').map((c) => `@${c}`).join(', ');
