import type { MemoryEntry } from '../domain/entry.js';
import { NotFoundError } from '../errors.js';
import type { Memory } from '../memory/memory.js';
import { assertMayTouch, defaultUserOf, type Principal } from './auth.js';

/**
 * What a principal may reach, shared by the HTTP routes and the MCP tools so both doors enforce the
 * same rules. Memory ids belong to their user: a by-id operation acts on the memory of the user it
 * names (default: the key's only user, else "default") with that id, and never looks at other users'
 * ids — so no answer can depend on what another user stores. Naming a user the key may not touch is
 * a 403 whatever the id; an id the user does not hold is a 404.
 */
export function actingUser(p: Principal, named: string | undefined): string {
  const user = named ?? defaultUserOf(p);
  assertMayTouch(p, user);
  return user;
}

/** The memory `id` of the user named (see actingUser, Memory.find); 404 when that user holds none. */
export async function ownedEntry(memory: Memory, p: Principal, named: string | undefined, id: string): Promise<MemoryEntry> {
  const entry = await memory.find(actingUser(p, named), id);
  if (!entry) throw new NotFoundError(`memory ${id}`);
  return entry;
}
