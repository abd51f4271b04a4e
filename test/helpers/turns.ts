import { randomUUID } from 'node:crypto';
import { contentHash } from '../../src/domain/hash.js';
import type { Turn } from '../../src/domain/turn.js';

let seq = 0;
/**
 * A turn as the write path hands it to a store: validated, normalized, `created_at` canonical; each
 * call a unique id and a `created_at` one second after the previous call's.
 */
export function turn(user: string, session: string, content: string, extra: Partial<Turn> = {}): Turn {
  seq++;
  return {
    id: `t${seq}-${randomUUID().slice(0, 8)}`,
    user_id: user,
    session_id: session,
    role: 'user',
    name: null,
    content,
    content_hash: contentHash(content),
    created_at: new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString(),
    importance: null,
    pinned: false,
    metadata: null,
    ...extra,
  };
}
