import { contentHash } from '../../src/domain/hash.js';
import type { Turn } from '../../src/domain/turn.js';

let n = 0;

/** A fresh user id: contract tests share one database per file and never meet each other's rows. */
export const uid = (): string => `u-${Math.random().toString(36).slice(2)}`;

/** A validated turn, each one a minute after the previous (created_at orders them). */
export function turn(user: string, content: string, extra: Partial<Turn> = {}): Turn {
  n++;
  return {
    id: `t${n}-${Math.random().toString(36).slice(2, 8)}`,
    user_id: user,
    session_id: 's1',
    role: 'user',
    name: null,
    content,
    content_hash: contentHash(content),
    created_at: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
    importance: null,
    pinned: false,
    metadata: null,
    ...extra,
  };
}
