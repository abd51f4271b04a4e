import { embedJob } from '../../queues/producers.js';
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import type { DurableStore } from '../ports/durable-store.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { JobQueue } from '../../queues/queue.js';
import type { WritePath } from './write-path.js';
import { KindSchema, type MemoryEntry } from '../domain/entry.js';
import { contentHash } from '../domain/hash.js';
import { scoreImportance } from '../domain/importance.js';
import { GENERATED_ID_MARK, RoleSchema, SessionIdSchema, StorableMetadataSchema, StoredIdSchema, UserIdSchema, type Turn } from '../domain/turn.js';
import { ValidationError, describeDetails, zodDetails, type ErrorDetail } from '../errors.js';

/** What export and import use: the store's exchange port, the tiers, the write path's validation and jobs. */
export interface ExchangeDeps {
  config: Pick<Config, 'max_turn_chars'>;
  store: Pick<DurableStore, 'exchange'>;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
  embedders: EmbedderProvider;
  writePath: WritePath;
}

/**
 * The portable export of one user's memories (docs/architecture.md, maintenance), JSON Lines, version 1:
 *
 *   line 1   {"format":"neuralcleave-export","version":1,"user_id":…,"exported_at":…,"counts":{"turns","entries","short_term"}}
 *   then     {"type":"turn", id, user_id, session_id, role, name, content, created_at, importance, pinned, metadata,
 *             persisted, embedded_with, vector}                  one per turn of the turn log, oldest first
 *            {"type":"entry", id, user_id, session_id, role, name, kind, content, importance, pinned, metadata,
 *             covers, created_at, updated_at, vector}            one per long-term entry (turn, summary, archive)
 *            {"type":"short_term", session_id, turns: [...]}    one per live short-term session, its turns oldest first
 *
 * Every stored field is there except what is derived (`content_hash`, recomputed on import) and the
 * vectors themselves (embedder-specific; re-embedded on import). `persisted` says the turn's persist
 * job had completed; `embedded_with` names the embedder that embedded it; `vector` says whether it
 * had a vector under the exporting process's embedder (null when none was loaded), so an import
 * restores which memories the semantic tier finds — a pruned entry stays pruned. `counts` lets an
 * import detect a truncated file. A reader of a later version refuses an earlier reader's file and
 * says so; new optional fields may be added to version 1 records.
 */
export const EXPORT_FORMAT = 'neuralcleave-export';
export const EXPORT_VERSION = 1;

const Iso = z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString());
// what every durable store can hold (an export of one store may be imported into another)
const Metadata = StorableMetadataSchema.nullable();

export const ExportHeaderSchema = z.object({
  format: z.literal(EXPORT_FORMAT, { error: `not a NeuralCleave export (the first line must say "format":"${EXPORT_FORMAT}")` }),
  version: z.number().int().refine((v) => v === EXPORT_VERSION, { error: `unsupported export version; this build reads version ${EXPORT_VERSION}` }),
  user_id: UserIdSchema,
  exported_at: Iso,
  counts: z.object({ turns: z.number().int().min(0), entries: z.number().int().min(0), short_term: z.number().int().min(0) }).optional(),
});
export type ExportHeader = z.infer<typeof ExportHeaderSchema>;

const TurnFields = {
  // a short-term session may hold a summary (a generated id); a logged turn's id is a client id (checked by the write path)
  id: StoredIdSchema,
  user_id: UserIdSchema,
  session_id: SessionIdSchema,
  role: RoleSchema,
  name: z.string().max(128).nullable(),
  content: z.string(),
  created_at: Iso,
  importance: z.number().min(0).max(1).nullable(),
  pinned: z.boolean(),
  metadata: Metadata,
};

const TurnRecordSchema = z.object({
  type: z.literal('turn'),
  ...TurnFields,
  persisted: z.boolean(),
  embedded_with: z.string().nullable(),
  vector: z.boolean().nullable(),
});

const EntryRecordSchema = z.object({
  type: z.literal('entry'),
  id: StoredIdSchema,
  user_id: UserIdSchema,
  session_id: SessionIdSchema,
  role: RoleSchema,
  name: z.string().max(128).nullable(),
  kind: KindSchema,
  content: z.string().min(1).max(1_000_000),
  importance: z.number().min(0).max(1),
  pinned: z.boolean(),
  metadata: Metadata,
  covers: z.array(StoredIdSchema).nullable(),
  created_at: Iso,
  updated_at: Iso,
  vector: z.boolean().nullable(),
});

const ShortTermRecordSchema = z.object({
  type: z.literal('short_term'),
  session_id: SessionIdSchema,
  turns: z.array(z.object(TurnFields)).max(10_000),
});

const RecordSchema = z.discriminatedUnion('type', [TurnRecordSchema, EntryRecordSchema, ShortTermRecordSchema]);
export type ExportRecord = z.infer<typeof RecordSchema>;
type TurnRecord = z.infer<typeof TurnRecordSchema>;
type EntryRecord = z.infer<typeof EntryRecordSchema>;

const PAGE = 1000;

/** Streams a user's export: the header, then turns, entries and short-term sessions. */
export async function* exportUser(services: ExchangeDeps, userId: string): AsyncGenerator<ExportHeader | ExportRecord> {
  const { vectors, shortTerm } = services;
  const exchange = services.store.exchange;
  const embedder = await services.embedders.ready();
  const hasVector = async (ids: string[]): Promise<(id: string) => boolean | null> => {
    if (!embedder || ids.length === 0) return () => null;
    const present = await vectors.has(embedder, userId, ids);
    return (id) => present.has(id);
  };

  const sessions = await shortTerm.sessions(userId);
  const liveSessions: Array<{ session_id: string; turns: Turn[] }> = [];
  for (const s of sessions) {
    const turns = await shortTerm.recent(userId, s);
    if (turns.length > 0) liveSessions.push({ session_id: s, turns });
  }
  const counts = await exchange.counts(userId);
  yield {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    user_id: userId,
    exported_at: new Date().toISOString(),
    counts: { ...counts, short_term: liveSessions.length },
  };

  for await (const page of exchange.turns(userId, PAGE)) {
    const vectorOf = await hasVector(page.map((r) => r.turn.id));
    for (const r of page) {
      const { content_hash: _h, ...t } = r.turn;
      yield { type: 'turn', ...t, persisted: r.persisted, embedded_with: r.embedded_with, vector: vectorOf(t.id) };
    }
  }

  for await (const page of exchange.entries(userId, PAGE)) {
    const vectorOf = await hasVector(page.map((e) => e.id));
    for (const entry of page) {
      const { content_hash: _h, ...e } = entry;
      yield { type: 'entry', ...e, vector: vectorOf(e.id) };
    }
  }

  for (const s of liveSessions) {
    yield { type: 'short_term', session_id: s.session_id, turns: s.turns.map(({ content_hash: _h, ...t }) => t) };
  }
}

export interface ImportReport {
  user_id: string;
  turns: { total: number; new: number; already_stored: number };
  entries: { total: number; new: number; already_stored: number };
  short_term_sessions: number;
  embeds_enqueued: number;
}

export interface ImportOptions {
  /** how a record's position is named in errors (the CLI names file lines); default "record N" */
  locate?: (index: number) => string;
}

/**
 * Restores an export. Everything is validated first — the header, every record, turns through the
 * write path's own schema (max_turn_chars, metadata size, ids) — and a bad record stores nothing.
 * The turn log and the long-term store are then written in one transaction, the short-term sessions
 * restored, and embeddings enqueued for what had a vector. Idempotent: ids already stored are left
 * as they are, so importing the same file twice changes nothing the second time. Ids are the user's
 * own: other users' memories are never looked at. A turn id the user holds with other content is
 * refused (ContentConflictError) and nothing is written.
 */
export async function importRecords(
  services: ExchangeDeps,
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const locate = options.locate ?? ((i: number) => `record ${i + 1}`);
  const { header, turns, entries, shortTerm } = await validateAll(services, records, locate);
  const userId = header.user_id;

  const restored = await services.store.exchange.restore(
    turns.map((t) => ({
      turn: t.turn,
      persistedImportance: t.record.persisted ? (t.turn.importance ?? scoreImportance(t.turn.content, t.turn.role)) : null,
      // embedded once, but its vector was removed since (a pruned memory): it stays without one
      embeddedWith: t.record.embedded_with && t.record.vector === false ? t.record.embedded_with : null,
    })),
    entries.map((e) => e.entry),
    Date.now(),
  );
  const applied = { newTurns: new Set(restored.turns), written: new Set(restored.entries) };

  for (const s of shortTerm) await services.shortTerm.push(s);

  // what had a vector (or was waiting for one) is embedded again; turns through the write path's jobs
  const turnJobs = turns.filter((t) => applied.newTurns.has(t.turn.id));
  const embedTurns = turnJobs.filter((t) => t.record.vector !== false || t.record.embedded_with === null);
  const persistTurns = turnJobs.filter((t) => !t.record.persisted);
  await services.writePath.enqueue(embedTurns.map((t) => t.turn), { embed: true, persist: false });
  await services.writePath.enqueue(persistTurns.map((t) => t.turn), { embed: false, persist: true });
  const turnIds = new Set(turns.map((t) => t.turn.id));
  const embedEntries = entries.filter((e) => applied.written.has(e.entry.id) && !turnIds.has(e.entry.id) && e.record.vector !== false);
  if (embedEntries.length > 0) {
    await services.queue.add(
      'embed',
      embedEntries.map(({ entry: e }) => embedJob(e, e.kind, e.content_hash)),
    );
  }

  return {
    user_id: userId,
    turns: { total: turns.length, new: applied.newTurns.size, already_stored: turns.length - applied.newTurns.size },
    entries: { total: entries.length, new: applied.written.size, already_stored: entries.length - applied.written.size },
    short_term_sessions: shortTerm.length,
    embeds_enqueued: embedTurns.length + embedEntries.length,
  };
}

interface Validated {
  header: ExportHeader;
  turns: Array<{ record: TurnRecord; turn: Turn }>;
  entries: Array<{ record: EntryRecord; entry: MemoryEntry }>;
  shortTerm: Turn[][];
}

async function validateAll(services: ExchangeDeps, records: Iterable<unknown> | AsyncIterable<unknown>, locate: (i: number) => string): Promise<Validated> {
  let header: ExportHeader | null = null;
  const out: Omit<Validated, 'header'> = { turns: [], entries: [], shortTerm: [] };
  const fail = (i: number, details: ErrorDetail[]): never => {
    const prefixed = details.map((d) => ({ path: `${locate(i)}: ${d.path}`, message: d.message }));
    throw new ValidationError(`invalid export, ${locate(i)}: ${describeDetails(details)}`, prefixed);
  };
  // the write path's own validation: max_turn_chars, control characters, metadata size, ids
  const asTurn = (i: number, t: z.infer<z.ZodObject<typeof TurnFields>>, path: string, allowGenerated = false): Turn => {
    const generated = allowGenerated && t.id.includes(GENERATED_ID_MARK);
    try {
      const [turn] = services.writePath.validate([
        {
          ...(generated ? {} : { id: t.id }),
          user_id: t.user_id,
          session_id: t.session_id,
          role: t.role,
          content: t.content,
          created_at: t.created_at,
          pinned: t.pinned,
          ...(t.name !== null ? { name: t.name } : {}),
          ...(t.importance !== null ? { importance: t.importance } : {}),
          ...(t.metadata !== null ? { metadata: t.metadata } : {}),
        },
      ]);
      return generated ? { ...turn!, id: t.id } : turn!;
    } catch (err) {
      if (err instanceof ValidationError) return fail(i, (err.details ?? []).map((d) => ({ ...d, path: path + d.path })));
      throw err;
    }
  };

  let i = 0;
  for await (const value of records as AsyncIterable<unknown>) {
    if (i === 0) {
      const parsed = ExportHeaderSchema.safeParse(value);
      if (!parsed.success) fail(0, zodDetails(parsed.error.issues));
      header = parsed.data!;
      i++;
      continue;
    }
    const parsed = RecordSchema.safeParse(value);
    if (!parsed.success) fail(i, zodDetails(parsed.error.issues));
    const r = parsed.data!;
    const userId = header!.user_id;
    if (r.type === 'turn') {
      if (r.user_id !== userId) fail(i, [{ path: 'user_id', message: `must be the header's user "${userId}"` }]);
      out.turns.push({ record: r, turn: asTurn(i, r, '') });
    } else if (r.type === 'entry') {
      if (r.user_id !== userId) fail(i, [{ path: 'user_id', message: `must be the header's user "${userId}"` }]);
      if (r.kind === 'turn' && r.content.length > services.config.max_turn_chars) {
        fail(i, [{ path: 'content', message: `at most ${services.config.max_turn_chars} characters (max_turn_chars)` }]);
      }
      const { type: _t, vector: _v, ...e } = r;
      out.entries.push({ record: r, entry: { ...e, content_hash: contentHash(e.content) } });
    } else {
      const turns = r.turns.map((t, j) => {
        if (t.user_id !== userId || t.session_id !== r.session_id) fail(i, [{ path: `turns.${j}`, message: `must belong to user "${userId}" and session "${r.session_id}"` }]);
        return asTurn(i, t, `turns.${j}.`, true);
      });
      out.shortTerm.push(turns);
    }
    i++;
  }
  if (!header) throw new ValidationError('empty export: the first line must be the export header', [{ path: 'header', message: 'missing' }]);
  const counts = header.counts;
  if (counts && (counts.turns !== out.turns.length || counts.entries !== out.entries.length || counts.short_term !== out.shortTerm.length)) {
    throw new ValidationError(
      `export is incomplete: the header announces ${counts.turns} turns, ${counts.entries} entries, ${counts.short_term} short-term sessions; the file holds ${out.turns.length}, ${out.entries.length}, ${out.shortTerm.length}`,
      [{ path: 'counts', message: 'does not match the records (a truncated file?)' }],
    );
  }
  return { header, ...out };
}
