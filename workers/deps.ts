import type { Archiver } from '../src/archival/archiver.js';
import type { ConversationCompactor } from '../src/compaction/compactor.js';
import type { EmbedderProvider } from '../src/embedding/provider.js';
import type { Logger } from '../src/logger.js';
import type { LongTermStore } from '../src/ports/long-term.js';
import type { TurnLog } from '../src/ports/turn-log.js';
import type { VectorIndex } from '../src/ports/vector-index.js';

/** What the processors need, passed in (never imported as globals). */
export interface ProcessorDeps {
  log: Logger;
  embedders: EmbedderProvider;
  vectors: VectorIndex;
  /** the SQLite turn log and long-term store; absent on a host that does not hold the file */
  turnLog?: TurnLog;
  longTerm?: LongTermStore;
  importanceThreshold: number;
  /** archival over the SQLite file; absent on a host that does not hold it */
  archiver?: Archiver;
  /** compaction over the SQLite file and the short-term tier; absent on a host that does not hold the file */
  compactor?: ConversationCompactor;
}
