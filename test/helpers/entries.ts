import type { MemoryEntry } from '../../src/domain/entry.js';
import { contentHash } from '../../src/domain/hash.js';

/** The user's i-th long-term entry: id `user-i`, 20 to a session, a minute after the one before. */
export function userEntry(user: string, i: number, content: string): MemoryEntry {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return {
    id: `${user}-${i}`, user_id: user, session_id: `${user}-s${Math.floor(i / 20)}`, role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(content),
    importance: 0.5, pinned: false, metadata: {}, covers: null, created_at: at, updated_at: at,
  };
}
