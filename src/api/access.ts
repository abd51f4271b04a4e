import type { MemoryEntry } from '../domain/entry.js';
import { NotFoundError } from '../errors.js';
import type { Memory } from '../memory/memory.js';
import { assertMayTouch, defaultUserOf, mayTouch, type Principal } from './auth.js';

/**
 * What a principal may reach, shared by the HTTP routes and the MCP tools so both doors enforce the
 * same rules. By-id operations answer 404 both for an unknown id and for an id whose owner the key may
 * not touch, so a key cannot learn which ids exist under other users. Operations that name a user
 * answer 403 instead: the client said whose memories it wants, and the answer reveals nothing stored.
 */
export async function assertOwned(memory: Memory, p: Principal, id: string): Promise<void> {
  const owner = await memory.ownerOf(id);
  if (owner === null || !mayTouch(p, owner)) throw new NotFoundError(`memory ${id}`);
}

/** The long-term entry `id`, when the principal may touch its owner; else 404 like an unknown id. */
export async function ownedEntry(memory: Memory, p: Principal, id: string): Promise<MemoryEntry> {
  const entry = await memory.get(id);
  if (!entry || !mayTouch(p, entry.user_id)) throw new NotFoundError(`memory ${id}`);
  return entry;
}

/** The user an operation acts for: the one named, else the principal's default; 403 when not the key's. */
export function actingUser(p: Principal, named: string | undefined): string {
  const user = named ?? defaultUserOf(p);
  assertMayTouch(p, user);
  return user;
}
