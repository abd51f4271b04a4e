import type { z } from 'zod';
import type { ApiSchemas } from '../api/schemas.js';

/*
 * Every request and response type of the client is read from the zod schemas the server validates
 * with (src/api/schemas.ts), never written again here: a field changed there changes these types, and
 * a program built on the old shape stops compiling. `import type` only, so none of it is in the bundle.
 */
type In<K extends keyof ApiSchemas> = z.input<ApiSchemas[K]>;
type Out<K extends keyof ApiSchemas> = z.output<ApiSchemas[K]>;

/** one turn as sent: `session_id` comes from `addTurns`' first argument, `user_id` defaults to the key's only user */
export type TurnInput = In<'TurnInSession'>;
export type AddTurnsResult = Out<'AddTurnsResponse'>;
export type RetrieveRequest = In<'RetrieveBody'>;
export type RetrieveResponse = Out<'RetrieveResponse'>;
export type RetrievalResult = RetrieveResponse['results'][number];
export type MemoryEntry = Out<'EntryResponse'>;
export type EntriesResponse = Out<'EntriesResponse'>;
/** `recent`'s options: the query string's fields, as their parsed types */
export type RecentOptions = Out<'RecentQuery'>;
export type SearchOptions = Omit<Out<'SearchQuery'>, 'q'>;
export type MemoryPatch = In<'PatchBody'>;
export type DeleteResult = Out<'DeleteResponse'>;
export type PruneRequest = In<'PruneBody'>;
export type PruneResult = Out<'PruneResponse'>;
export type ChatRequest = In<'ChatBody'>;
export type ChatResponse = Out<'ChatResponse'>;
export type HealthReport = Out<'HealthResponse'>;
export type ErrorResponse = Out<'ErrorResponse'>;
