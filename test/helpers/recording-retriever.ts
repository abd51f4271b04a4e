import type { Services } from '../../src/app.js';
import type { Memory } from '../../src/memory/memory.js';
import type { ListOptions } from '../../src/ports/long-term.js';
import { ALL_SIGNALS, type Signals } from '../../src/retrieval/rank.js';
import { Retriever } from '../../src/retrieval/retrieve.js';
import { testMemory } from './services.js';

/** A memory on a fresh SQLite file holding user `u`'s turns, given as [id, session, content], all written through. */
export async function memoryOfTurns(turns: ReadonlyArray<readonly [id: string, session: string, content: string]>): Promise<{ memory: Memory; services: Services }> {
  const { memory, services } = await testMemory({}, { reconcile: false });
  await memory.addTurns(turns.map(([id, session_id, content]) => ({ id, user_id: 'u', session_id, role: 'user' as const, content, importance: 0.9 })));
  await memory.idle();
  return { memory, services };
}

/** A retriever on these services' real stores with these signals, handing each text search's options to `seen` first. */
export function recordingRetriever(services: Services, seen: (o: ListOptions) => void, signals: Signals = ALL_SIGNALS): Retriever {
  const base = services.retrieverDeps;
  const longTerm = Object.assign(Object.create(base.longTerm) as typeof base.longTerm, {
    searchText(userId: string, query: string, o: ListOptions) {
      seen(o);
      return base.longTerm.searchText(userId, query, o);
    },
  });
  return new Retriever({ ...base, longTerm, signals });
}
