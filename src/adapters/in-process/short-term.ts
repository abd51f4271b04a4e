import type { Turn } from '../../domain/turn.js';
import type { ShortTermOptions, ShortTermStore, VersionedTurns } from '../../ports/short-term.js';

interface Session {
  turns: Turn[];
  expiresAt: number;
  /** changed with every change of `turns` (see recentSince) */
  version: number;
}

/** In-process short-term tier: a Map of sessions, each with a TTL refreshed on write. */
export class InProcessShortTermStore implements ShortTermStore {
  readonly backend = 'memory' as const;
  private readonly bySession = new Map<string, Session>();
  private readonly now: () => number;
  private sweepAt = 0;
  /** the last version given to a session: versions are never given twice, so a gone session's never returns */
  private versions = 0;

  constructor(
    private readonly options: ShortTermOptions,
    clock?: () => number,
  ) {
    this.now = clock ?? Date.now;
  }

  private key(userId: string, sessionId: string): string {
    return `${userId}\u0000${sessionId}`;
  }

  private live(key: string): Session | undefined {
    const s = this.bySession.get(key);
    if (s && s.expiresAt <= this.now()) {
      this.bySession.delete(key);
      return undefined;
    }
    return s;
  }

  /** Expired sessions nobody reads again are dropped at most once per TTL. */
  private sweep(): void {
    const now = this.now();
    if (now < this.sweepAt) return;
    this.sweepAt = now + this.options.ttlSeconds * 1000;
    for (const [k, s] of this.bySession) if (s.expiresAt <= now) this.bySession.delete(k);
  }

  async push(turns: readonly Turn[]): Promise<void> {
    this.sweep();
    const expiresAt = this.now() + this.options.ttlSeconds * 1000;
    for (const t of turns) {
      const key = this.key(t.user_id, t.session_id);
      let s = this.live(key);
      if (!s) this.bySession.set(key, (s = { turns: [], expiresAt, version: ++this.versions }));
      s.expiresAt = expiresAt;
      if (s.turns.some((x) => x.id === t.id)) continue;
      s.turns.push(t);
      if (s.turns.length > this.options.maxTurns) s.turns.splice(0, s.turns.length - this.options.maxTurns);
      s.version = ++this.versions;
    }
  }

  async recent(userId: string, sessionId: string, limit = this.options.maxTurns): Promise<Turn[]> {
    const s = this.live(this.key(userId, sessionId));
    return s ? s.turns.slice(-limit) : [];
  }

  async recentSince(userId: string, sessionId: string, limit = this.options.maxTurns, known: number | null): Promise<VersionedTurns | null> {
    const s = this.live(this.key(userId, sessionId));
    const version = s?.version ?? 0;
    if (version === known) return null;
    return { version, turns: s ? s.turns.slice(-limit) : [] };
  }

  async replace(userId: string, sessionId: string, turns: readonly Turn[]): Promise<void> {
    const key = this.key(userId, sessionId);
    if (turns.length === 0) {
      this.bySession.delete(key);
      return;
    }
    this.bySession.set(key, {
      turns: turns.slice(-this.options.maxTurns),
      expiresAt: this.now() + this.options.ttlSeconds * 1000,
      version: ++this.versions,
    });
  }

  async remove(userId: string, sessionId: string, ids: readonly string[]): Promise<number> {
    const s = this.live(this.key(userId, sessionId));
    if (!s) return 0;
    const drop = new Set(ids);
    const before = s.turns.length;
    s.turns = s.turns.filter((t) => !drop.has(t.id));
    if (s.turns.length < before) s.version = ++this.versions;
    return before - s.turns.length;
  }

  async clear(userId: string, sessionId?: string): Promise<number> {
    if (sessionId !== undefined) return this.bySession.delete(this.key(userId, sessionId)) ? 1 : 0;
    let n = 0;
    const prefix = `${userId}\u0000`;
    for (const k of [...this.bySession.keys()]) if (k.startsWith(prefix)) n += this.bySession.delete(k) ? 1 : 0;
    return n;
  }

  async clearAll(): Promise<number> {
    const n = this.bySession.size;
    this.bySession.clear();
    return n;
  }

  async sessions(userId: string): Promise<string[]> {
    return this.sessionsOf(userId);
  }

  async everySession(): Promise<Array<{ user_id: string; session_id: string }>> {
    const out: Array<{ user_id: string; session_id: string }> = [];
    for (const k of [...this.bySession.keys()]) {
      if (!this.live(k)) continue;
      const cut = k.indexOf('\u0000');
      out.push({ user_id: k.slice(0, cut), session_id: k.slice(cut + 1) });
    }
    return out;
  }

  private sessionsOf(userId: string): string[] {
    const prefix = `${userId}\u0000`;
    const out: string[] = [];
    for (const k of this.bySession.keys()) if (k.startsWith(prefix) && this.live(k)) out.push(k.slice(prefix.length));
    return out;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.bySession.clear();
  }
}
