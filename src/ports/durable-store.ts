import type { ArchiveStore } from './archive-store.js';
import type { ErasureStore } from './erasure.js';
import type { ExchangeStore } from './exchange.js';
import type { LongTermStore } from './long-term.js';
import type { MaintenanceStore } from './maintenance.js';
import type { TurnLog } from './turn-log.js';

/**
 * The durable store: the one database every acknowledged turn is written to (SQLite file or
 * PostgreSQL), seen through the narrow ports the use cases need. A composition root opens one
 * (`openSqliteStore`, `openPostgresStore`) and hands its parts to the use cases; nothing else knows
 * which database it is, or holds a connection to it (see docs/architecture.md, layers and folders).
 *
 * Contract: the parts share one database and one transaction discipline, so what one part commits the
 * others read at once; every part honours its own port's contract. Driver errors leave the store as the
 * error catalog's typed errors: a database that does not answer or is busy past its timeout is a
 * `BackendUnavailableError` (503, retry); an id held with other content is a `ContentConflictError`.
 * `close` releases the connections once; nothing may be called after it. Not covered: the short-term
 * tier, the vectors of a vector backend of their own (Qdrant) and the queue.
 */
export interface DurableStore {
  readonly kind: 'sqlite' | 'postgres';
  /** what reports and logs name: the SQLite file's path, or the PostgreSQL URL with its password masked */
  readonly where: string;
  readonly turnLog: TurnLog;
  readonly longTerm: LongTermStore;
  readonly archives: ArchiveStore;
  readonly erasure: ErasureStore;
  readonly maintenance: MaintenanceStore;
  readonly exchange: ExchangeStore;
  close(): Promise<void>;
}
