import type { UserSummary, WhoAmI } from './types.js';

/** What every view is rendered with. */
export interface ViewContext {
  who: WhoAmI;
  /** the users the key may see (cached for the page's life; `fresh` reloads) */
  users(fresh?: boolean): Promise<UserSummary[]>;
  /** renders the current route again (after an edit or delete) */
  rerender(): void;
}
