/**
 * The API shapes the inspector reads, taken at build time from the zod schemas the server validates
 * with and documents /openapi.json from (src/api/schemas.ts, src/api/inspect-schemas.ts, src/domain/):
 * a field changed there changes these types, and a page built on the old shape stops compiling.
 * `import type` only: erased by the build, so no server code (nor zod) enters the page's bundle.
 */
import type { z } from 'zod';
import type { InspectSchemas } from '../../src/api/inspect-schemas.js';
import type { ApiSchemas } from '../../src/api/schemas.js';

type Out<K extends keyof ApiSchemas> = z.output<ApiSchemas[K]>;
type InspectOut<K extends keyof InspectSchemas> = z.output<InspectSchemas[K]>;

export type { Tier } from '../../src/domain/entry.js';
export type { Kind, Role } from '../../src/domain/record.js';
export type { JobCounts } from '../../src/ports/job-queue.js';
export type { InspectedEntry, SessionSummary, UserSummary } from '../../src/domain/inspection.js';
import type { Tier } from '../../src/domain/entry.js';
import type { InspectedEntry } from '../../src/domain/inspection.js';

/** the tiers in the order the page shows them; the check below fails the build when one is missing */
export const TIERS = ['short_term', 'semantic', 'long_term'] as const satisfies readonly Tier[];
type MissingTier = Exclude<Tier, (typeof TIERS)[number]>;
const everyTier: [MissingTier] extends [never] ? true : MissingTier = true;
void everyTier;

export type WhoAmI = InspectOut<'WhoAmIResponse'>;
/** a long-term entry, as /memory/search and PATCH /memory/:id answer */
export type MemoryEntry = Out<'EntryResponse'>;
export type RetrieveResponse = Out<'RetrieveResponse'>;
export type RetrievalResult = RetrieveResponse['results'][number];
export type Explain = RetrievalResult['explain'];
export type TierReport = RetrieveResponse['tiers'][Tier];
export type Health = Out<'HealthResponse'>;
export type BackendReport = Health['backends'][string];
export type FailedJob = InspectOut<'FailedJobsResponse'>['jobs'][number];
export type DeleteResult = Out<'DeleteResponse'>;

/** what an entry row needs, whichever route it came from */
export type EntryLike = Pick<InspectedEntry, 'id' | 'user_id' | 'session_id' | 'role' | 'name' | 'kind' | 'content' | 'pinned' | 'created_at'> & {
  importance: number | null;
  /** absent for /memory/search rows: those are long-term entries */
  tiers?: InspectedEntry['tiers'];
  pending?: InspectedEntry['pending'];
};
