import { GENERATED_ID_MARK, type Turn } from '../domain/turn.js';
import type { Logger } from '../logger.js';
import type { ShortTermStore, VersionedTurns } from '../ports/short-term.js';
import type { TurnLog } from '../ports/turn-log.js';

/**
 * The short-term tier as every writer of this process sees it: after a push or a replace it reads the
 * turn log for the turns just written and takes back the copies whose turn is gone or holds another
 * text now (docs/architecture.md, write path). Deleters (delete, prune, erasure, archival) remove from
 * the turn log before the short-term tier, so a write racing them either lands before their removal
 * (which then takes it out) or is followed by this read, which no longer finds the turn: no deleted
 * turn comes back, whoever wins. A late copy of a text an edit replaced goes the same way.
 *
 * Generated memories (summaries, archives: ids with `~`) have no turn-log row and are left alone.
 */
export class ShortTermGuard implements ShortTermStore {
  constructor(
    private readonly inner: ShortTermStore,
    private readonly turnLog: Pick<TurnLog, 'versions'>,
    private readonly log: Logger,
  ) {}

  get backend(): ShortTermStore['backend'] {
    return this.inner.backend;
  }

  async push(turns: readonly Turn[]): Promise<void> {
    await this.inner.push(turns);
    await this.settle(turns);
  }

  async replace(userId: string, sessionId: string, turns: readonly Turn[]): Promise<void> {
    await this.inner.replace(userId, sessionId, turns);
    await this.settle(turns);
  }

  /**
   * Removes the copies of `turns` that no longer match the turn log (gone, or another text); returns
   * how many. Also what another process's delete, edit or prune asks of this one (ErasureWatcher).
   */
  async settle(turns: readonly Turn[]): Promise<number> {
    const logged = turns.filter((t) => !t.id.includes(GENERATED_ID_MARK));
    if (logged.length === 0) return 0;
    const now = await this.turnLog.versions(logged);
    const stale = new Map<string, { user_id: string; session_id: string; ids: string[] }>();
    logged.forEach((t, i) => {
      const held = now[i];
      if (held && held.content_hash === t.content_hash && held.session_id === t.session_id) return;
      const key = `${t.user_id}\u0000${t.session_id}`;
      const s = stale.get(key) ?? { user_id: t.user_id, session_id: t.session_id, ids: [] };
      s.ids.push(t.id);
      stale.set(key, s);
    });
    let removed = 0;
    for (const s of stale.values()) removed += await this.inner.remove(s.user_id, s.session_id, s.ids);
    if (removed > 0) this.log.info({ removed }, 'short-term copies of turns deleted or edited meanwhile taken back');
    return removed;
  }

  /** Settles one session as it is held now (a delete, edit or prune run by another process). */
  async settleSession(userId: string, sessionId: string): Promise<number> {
    return this.settle(await this.inner.recent(userId, sessionId));
  }

  recent(userId: string, sessionId: string, limit?: number): Promise<Turn[]> {
    return this.inner.recent(userId, sessionId, limit);
  }

  recentSince(userId: string, sessionId: string, limit: number | undefined, known: number | null): Promise<VersionedTurns | null> {
    return this.inner.recentSince(userId, sessionId, limit, known);
  }

  remove(userId: string, sessionId: string, ids: readonly string[]): Promise<number> {
    return this.inner.remove(userId, sessionId, ids);
  }

  clear(userId: string, sessionId?: string): Promise<number> {
    return this.inner.clear(userId, sessionId);
  }

  clearAll(): Promise<number> {
    return this.inner.clearAll();
  }

  sessions(userId: string): Promise<string[]> {
    return this.inner.sessions(userId);
  }

  everySession(): Promise<Array<{ user_id: string; session_id: string }>> {
    return this.inner.everySession();
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
