import type { Database as Db } from 'better-sqlite3';
import { OWNED_TEXT_FUNCTION } from './owned-text.js';
import { fillRepeats } from './repeats.js';

/**
 * Versioned schema migrations of the SQLite file, applied in order inside one transaction each;
 * `PRAGMA user_version` records the last one applied. Never edit a released migration: add one. A
 * migration's `fill` runs after its `sql`, in the same transaction: what SQL alone cannot compute.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string; fill?: (db: Db) => void }> = [
  {
    version: 1,
    name: 'turn log, long-term entries with FTS5, embedded vectors',
    sql: `
      -- The turn log: every accepted turn, durable before it is acknowledged (the outbox).
      CREATE TABLE turns (
        id            TEXT PRIMARY KEY,
        user_id       TEXT NOT NULL,
        session_id    TEXT NOT NULL,
        role          TEXT NOT NULL,
        name          TEXT,
        content       TEXT NOT NULL,
        content_hash  TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        importance    REAL,
        pinned        INTEGER NOT NULL DEFAULT 0,
        metadata      TEXT,
        accepted_at   INTEGER NOT NULL,
        embedded_with TEXT,
        persisted_at  INTEGER
      ) STRICT;
      CREATE INDEX turns_user_session ON turns (user_id, session_id, created_at);
      CREATE INDEX turns_pending_embed ON turns (accepted_at) WHERE embedded_with IS NULL;
      CREATE INDEX turns_pending_persist ON turns (accepted_at) WHERE persisted_at IS NULL;

      CREATE TABLE entries (
        id           TEXT PRIMARY KEY,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        role         TEXT NOT NULL,
        name         TEXT,
        kind         TEXT NOT NULL CHECK (kind IN ('turn', 'summary', 'archive')),
        content      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        importance   REAL NOT NULL,
        pinned       INTEGER NOT NULL DEFAULT 0,
        metadata     TEXT,
        covers       TEXT,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        UNIQUE (user_id, content_hash)
      ) STRICT;
      CREATE INDEX entries_user_created ON entries (user_id, created_at);
      CREATE INDEX entries_user_session ON entries (user_id, session_id, created_at);

      CREATE VIRTUAL TABLE entries_fts USING fts5(
        content, name, content='entries', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts (rowid, content, name) VALUES (new.rowid, new.content, coalesce(new.name, ''));
      END;
      CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''));
      END;
      CREATE TRIGGER entries_au AFTER UPDATE OF content, name ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''));
        INSERT INTO entries_fts (rowid, content, name) VALUES (new.rowid, new.content, coalesce(new.name, ''));
      END;

      -- Embedded semantic tier: one row per (memory, embedder); vectors are little-endian float32.
      CREATE TABLE vectors (
        id           TEXT NOT NULL,
        embedder     TEXT NOT NULL,
        dim          INTEGER NOT NULL,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        role         TEXT NOT NULL,
        name         TEXT,
        kind         TEXT NOT NULL,
        content      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        vector       BLOB NOT NULL,
        PRIMARY KEY (id, embedder)
      ) STRICT;
      CREATE INDEX vectors_embedder_user ON vectors (embedder, user_id);
    `,
  },
  {
    version: 2,
    name: 'archival run log, vector-delete outbox, FTS secure delete',
    sql: `
      -- One row per invocation of the archive processor (scheduled or by hand): doctor shows the last
      -- run, and a second invocation of the same scheduled occurrence is visible (and skipped).
      CREATE TABLE archive_runs (
        seq         INTEGER PRIMARY KEY,
        run_id      TEXT NOT NULL,
        trigger     TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
        outcome     TEXT NOT NULL CHECK (outcome IN ('running', 'done', 'failed', 'duplicate')),
        dry_run     INTEGER NOT NULL,
        cutoff      TEXT NOT NULL,
        sessions    INTEGER NOT NULL DEFAULT 0,
        replaced    INTEGER NOT NULL DEFAULT 0,
        error       TEXT,
        pid         INTEGER NOT NULL,
        started_at  TEXT NOT NULL,
        finished_at TEXT
      ) STRICT;
      CREATE INDEX archive_runs_run ON archive_runs (run_id);

      -- Ids whose vectors must go, written in the same transaction that removes their rows, so a
      -- vector backend that fails (Qdrant down) is retried instead of leaving searchable orphans.
      CREATE TABLE vector_deletes (
        id        TEXT PRIMARY KEY,
        queued_at INTEGER NOT NULL
      ) STRICT;

      -- Deleted text leaves the full-text index at once instead of lingering in old segments until a
      -- merge: erasure (memory forget) must not leave a user's words in the file.
      INSERT INTO entries_fts (entries_fts, rank) VALUES ('secure-delete', 1);
    `,
  },
  {
    version: 3,
    name: 'vector change log for the embedded index',
    sql: `
      -- Every write to vectors, logged by triggers in the writer's transaction: each process's
      -- in-memory index replays "seq > last seen" to see the other processes' writes without a
      -- reload (src/adapters/embedded/change-log.ts). AUTOINCREMENT: a seq is never reused.
      CREATE TABLE vector_changes (
        seq      INTEGER PRIMARY KEY AUTOINCREMENT,
        id       TEXT NOT NULL,
        embedder TEXT NOT NULL,
        op       TEXT NOT NULL CHECK (op IN ('upsert', 'delete'))
      ) STRICT;
      -- The log keeps its newest rows only; a reader behind pruned_through reloads.
      CREATE TABLE vector_changes_state (
        one            INTEGER PRIMARY KEY CHECK (one = 1),
        pruned_through INTEGER NOT NULL
      ) STRICT;
      INSERT INTO vector_changes_state (one, pruned_through) VALUES (1, 0);
      CREATE TRIGGER vectors_log_insert AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_changes (id, embedder, op) VALUES (new.id, new.embedder, 'upsert');
      END;
      CREATE TRIGGER vectors_log_update AFTER UPDATE ON vectors BEGIN
        INSERT INTO vector_changes (id, embedder, op)
          SELECT old.id, old.embedder, 'delete' WHERE old.id IS NOT new.id OR old.embedder IS NOT new.embedder;
        INSERT INTO vector_changes (id, embedder, op) VALUES (new.id, new.embedder, 'upsert');
      END;
      CREATE TRIGGER vectors_log_delete AFTER DELETE ON vectors BEGIN
        INSERT INTO vector_changes (id, embedder, op) VALUES (old.id, old.embedder, 'delete');
      END;
    `,
  },
  {
    version: 4,
    name: 'erasure signals between the processes sharing the file',
    sql: `
      -- One row per erasure (forget, clear): a process holding state of its own (an in-process
      -- short-term store or queue, as \`serve\` without Redis does) sees erasures run by another process
      -- (the CLI) and erases its copy too (src/memory/forget.ts). Rows live for minutes, then go.
      -- user_id NULL: every user (clear --all).
      CREATE TABLE erasures (
        seq        INTEGER PRIMARY KEY,
        user_id    TEXT,
        session_id TEXT,
        pid        INTEGER NOT NULL,
        at         INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 5,
    name: 'FTS index carries the owner, so a text query reads only the user\'s postings',
    // FTS5 matches a term across every user before SQL can filter by owner: a word common in the
    // whole store cost tens of milliseconds for a user who has it twice. With the owner as an indexed
    // column, `user_id : "u" AND (...)` lets FTS5 intersect posting lists instead. (The owner column
    // is weighted 0 in bm25(); the SQL filter on entries.user_id stays the authority.)
    sql: `
      DROP TRIGGER entries_ai;
      DROP TRIGGER entries_ad;
      DROP TRIGGER entries_au;
      DROP TABLE entries_fts;
      CREATE VIRTUAL TABLE entries_fts USING fts5(
        content, name, user_id, content='entries', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
      );
      INSERT INTO entries_fts (entries_fts, rank) VALUES ('secure-delete', 1);
      CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts (rowid, content, name, user_id) VALUES (new.rowid, new.content, coalesce(new.name, ''), new.user_id);
      END;
      CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name, user_id) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''), old.user_id);
      END;
      CREATE TRIGGER entries_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name, user_id) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''), old.user_id);
        INSERT INTO entries_fts (rowid, content, name, user_id) VALUES (new.rowid, new.content, coalesce(new.name, ''), new.user_id);
      END;
      INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
    `,
  },
  {
    version: 6,
    name: 'memory ids scoped to their user; generated ids in their own namespace; equal text under two ids',
    // A client id means "this user's memory with that key": every key becomes (user_id, id), so two users
    // may use the same id and no write of one can collide with (or reveal) another's. Generated ids
    // (summaries, archives) take a "~" that client ids may not hold, so no client can claim one.
    // Tables are rebuilt keeping their rowids: the FTS index (content_rowid) stays valid as it is.
    // (user_id, content_hash) is no longer unique: equal text under a new id is its own memory.
    sql: `
      CREATE TABLE turns_v6 (
        id            TEXT NOT NULL,
        user_id       TEXT NOT NULL,
        session_id    TEXT NOT NULL,
        role          TEXT NOT NULL,
        name          TEXT,
        content       TEXT NOT NULL,
        content_hash  TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        importance    REAL,
        pinned        INTEGER NOT NULL DEFAULT 0,
        metadata      TEXT,
        accepted_at   INTEGER NOT NULL,
        embedded_with TEXT,
        persisted_at  INTEGER,
        PRIMARY KEY (user_id, id)
      ) STRICT;
      INSERT INTO turns_v6 (rowid, id, user_id, session_id, role, name, content, content_hash, created_at, importance, pinned,
                            metadata, accepted_at, embedded_with, persisted_at)
        SELECT rowid, id, user_id, session_id, role, name, content, content_hash, created_at, importance, pinned,
               metadata, accepted_at, embedded_with, persisted_at FROM turns;
      DROP TABLE turns;
      ALTER TABLE turns_v6 RENAME TO turns;
      CREATE INDEX turns_user_session ON turns (user_id, session_id, created_at);
      CREATE INDEX turns_pending_embed ON turns (accepted_at) WHERE embedded_with IS NULL;
      CREATE INDEX turns_pending_persist ON turns (accepted_at) WHERE persisted_at IS NULL;

      CREATE TABLE entries_v6 (
        id           TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        role         TEXT NOT NULL,
        name         TEXT,
        kind         TEXT NOT NULL CHECK (kind IN ('turn', 'summary', 'archive')),
        content      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        importance   REAL NOT NULL,
        pinned       INTEGER NOT NULL DEFAULT 0,
        metadata     TEXT,
        covers       TEXT,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (user_id, id)
      ) STRICT;
      INSERT INTO entries_v6 (rowid, id, user_id, session_id, role, name, kind, content, content_hash, importance, pinned,
                              metadata, covers, created_at, updated_at)
        SELECT rowid,
               CASE WHEN kind = 'summary' AND id LIKE 'summary-%' THEN 'summary~' || substr(id, 9)
                    WHEN kind = 'archive' AND id LIKE 'archive-%' THEN 'archive~' || substr(id, 9)
                    ELSE id END,
               user_id, session_id, role, name, kind, content, content_hash, importance, pinned, metadata,
               CASE WHEN kind = 'archive' THEN replace(covers, '"summary-', '"summary~') ELSE covers END,
               created_at, updated_at FROM entries;
      DROP TABLE entries;
      ALTER TABLE entries_v6 RENAME TO entries;
      CREATE INDEX entries_user_created ON entries (user_id, created_at);
      CREATE INDEX entries_user_session ON entries (user_id, session_id, created_at);
      CREATE INDEX entries_user_hash ON entries (user_id, content_hash);
      CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts (rowid, content, name, user_id) VALUES (new.rowid, new.content, coalesce(new.name, ''), new.user_id);
      END;
      CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name, user_id) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''), old.user_id);
      END;
      CREATE TRIGGER entries_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name, user_id) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''), old.user_id);
        INSERT INTO entries_fts (rowid, content, name, user_id) VALUES (new.rowid, new.content, coalesce(new.name, ''), new.user_id);
      END;

      CREATE TABLE vectors_v6 (
        id           TEXT NOT NULL,
        embedder     TEXT NOT NULL,
        dim          INTEGER NOT NULL,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        role         TEXT NOT NULL,
        name         TEXT,
        kind         TEXT NOT NULL,
        content      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        vector       BLOB NOT NULL,
        PRIMARY KEY (user_id, id, embedder)
      ) STRICT;
      INSERT INTO vectors_v6 (rowid, id, embedder, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector)
        SELECT rowid,
               CASE WHEN kind = 'summary' AND id LIKE 'summary-%' THEN 'summary~' || substr(id, 9)
                    WHEN kind = 'archive' AND id LIKE 'archive-%' THEN 'archive~' || substr(id, 9)
                    ELSE id END,
               embedder, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector FROM vectors;
      DROP TABLE vectors;
      ALTER TABLE vectors_v6 RENAME TO vectors;
      CREATE INDEX vectors_embedder_user ON vectors (embedder, user_id);

      -- the change log names (user, id) from now on; readers reload once instead of replaying old rows
      DELETE FROM vector_changes;
      ALTER TABLE vector_changes ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
      UPDATE vector_changes_state SET pruned_through = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'), 0);
      CREATE TRIGGER vectors_log_insert AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (new.user_id, new.id, new.embedder, 'upsert');
      END;
      CREATE TRIGGER vectors_log_update AFTER UPDATE ON vectors BEGIN
        INSERT INTO vector_changes (user_id, id, embedder, op)
          SELECT old.user_id, old.id, old.embedder, 'delete'
          WHERE old.id IS NOT new.id OR old.embedder IS NOT new.embedder OR old.user_id IS NOT new.user_id;
        INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (new.user_id, new.id, new.embedder, 'upsert');
      END;
      CREATE TRIGGER vectors_log_delete AFTER DELETE ON vectors BEGIN
        INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (old.user_id, old.id, old.embedder, 'delete');
      END;

      -- pending vector deletes name their owner; one whose owner no local vector tells is kept for every
      -- owner it had (doctor lists what is left)
      CREATE TABLE vector_deletes_v6 (
        user_id   TEXT NOT NULL,
        id        TEXT NOT NULL,
        queued_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, id)
      ) STRICT;
      INSERT OR IGNORE INTO vector_deletes_v6 (user_id, id, queued_at)
        SELECT v.user_id, d.id, d.queued_at FROM vector_deletes d JOIN vectors v ON v.id = d.id;
      DROP TABLE vector_deletes;
      ALTER TABLE vector_deletes_v6 RENAME TO vector_deletes;
    `,
  },
  {
    version: 7,
    name: 'vectors carry their metadata (filtered semantic search); processes confirm the erasures they applied',
    sql: `
      ALTER TABLE vectors ADD COLUMN metadata TEXT;
      -- vectors written before this version: their turn's (or entry's) metadata
      UPDATE vectors SET metadata = coalesce(
        (SELECT t.metadata FROM turns t WHERE t.user_id = vectors.user_id AND t.id = vectors.id),
        (SELECT e.metadata FROM entries e WHERE e.user_id = vectors.user_id AND e.id = vectors.id))
      WHERE EXISTS (SELECT 1 FROM turns t WHERE t.user_id = vectors.user_id AND t.id = vectors.id AND t.metadata IS NOT NULL)
         OR EXISTS (SELECT 1 FROM entries e WHERE e.user_id = vectors.user_id AND e.id = vectors.id AND e.metadata IS NOT NULL);

      -- One row per running process that holds state of its own (in-process short-term store or
      -- queue) and applies the erasures of the \`erasures\` table: \`seen_seq\` is the last one it has
      -- applied, so an erasure run elsewhere (the CLI) answers only once every such process has.
      CREATE TABLE erasure_listeners (
        pid          INTEGER PRIMARY KEY,
        seen_seq     INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 8,
    name: 'erasure signals and listeners name a process by instance id (host, pid, random part)',
    sql: `
      -- A pid is reused once its process ends, and names a process on one host only: the instance
      -- id (src/memory/process-instance.ts) does neither. Listeners re-register at their next
      -- heartbeat; signals already applied keep their seq.
      ALTER TABLE erasures DROP COLUMN pid;
      ALTER TABLE erasures ADD COLUMN instance TEXT NOT NULL DEFAULT '';
      DROP TABLE erasure_listeners;
      CREATE TABLE erasure_listeners (
        instance     TEXT PRIMARY KEY,
        seen_seq     INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 9,
    name: "each user's text statistics, for BM25 that depends on that user's entries only",
    // FTS5 keeps one row count and one total length for the whole table, and bm25() counts a word's
    // rows of every user: one tenant's scores moved with the words another stored. The long-term
    // search (adapters/sqlite/bm25.ts) takes each user's entry count and total length from here.
    // Lengths are UTF-8 bytes of content and name: octet_length() reads them without the text. A user
    // whose last entry goes leaves no row (the id itself is the user's data).
    sql: `
      CREATE TABLE text_stats (
        user_id TEXT PRIMARY KEY,
        docs    INTEGER NOT NULL,
        bytes   INTEGER NOT NULL
      ) STRICT;
      INSERT INTO text_stats (user_id, docs, bytes)
        SELECT user_id, count(*), sum(octet_length(content) + octet_length(coalesce(name, ''))) FROM entries GROUP BY user_id;
      CREATE TRIGGER entries_stats_ai AFTER INSERT ON entries BEGIN
        INSERT INTO text_stats (user_id, docs, bytes) VALUES (new.user_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')))
          ON CONFLICT (user_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes;
      END;
      CREATE TRIGGER entries_stats_ad AFTER DELETE ON entries BEGIN
        UPDATE text_stats SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))) WHERE user_id = old.user_id;
        DELETE FROM text_stats WHERE user_id = old.user_id AND docs <= 0;
      END;
      CREATE TRIGGER entries_stats_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        UPDATE text_stats SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))) WHERE user_id = old.user_id;
        DELETE FROM text_stats WHERE user_id = old.user_id AND docs <= 0;
        INSERT INTO text_stats (user_id, docs, bytes) VALUES (new.user_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')))
          ON CONFLICT (user_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes;
      END;
    `,
  },
  {
    version: 10,
    name: 'a delete, edit or prune is signalled to the processes holding a short-term tier of their own',
    sql: `
      -- 'erase': forget and clear (everything in scope goes); 'settle': a delete, edit or prune (each
      -- process checks its short-term copies in scope against the turn log)
      ALTER TABLE erasures ADD COLUMN action TEXT NOT NULL DEFAULT 'erase' CHECK (action IN ('erase', 'settle'));
    `,
  },
  {
    version: 11,
    name: "the words a long entry repeats, for text search's word frequencies (src/adapters/sqlite/repeats.ts)",
    sql: `
      CREATE TABLE entry_repeats (rowid INTEGER PRIMARY KEY, repeats TEXT NOT NULL);
      -- the store's write paths record an entry's repeats; a change of its text or its delete drops them
      CREATE TRIGGER entry_repeats_ad AFTER DELETE ON entries BEGIN
        DELETE FROM entry_repeats WHERE rowid = old.rowid;
      END;
      CREATE TRIGGER entry_repeats_au AFTER UPDATE OF content, name ON entries
        WHEN old.content IS NOT new.content OR old.name IS NOT new.name BEGIN
        DELETE FROM entry_repeats WHERE rowid = old.rowid;
      END;
    `,
    fill: fillRepeats,
  },
  {
    version: 12,
    name: "the embedded vector index's filter columns in an index of their own",
    sql: `
      -- a filtered semantic search lists the user's vectors its filter allows: from this index alone,
      -- not from the rows, each of which holds a vector and a text (100k real turns of one user: every
      -- filtered retrieve read them all)
      CREATE INDEX vectors_filter ON vectors (embedder, user_id, session_id, role, kind, created_at, metadata);
      DROP INDEX vectors_embedder_user;
    `,
  },
  {
    version: 13,
    name: "each entry's owner and length beside its rowid, for text search (src/adapters/sqlite/bm25.ts)",
    sql: `
      -- what BM25 reads of every row a word matches: whose it is and its length (the UTF-8 bytes of its
      -- content and name, as text_stats sums them). From the entry itself that is a descent into rows
      -- holding whole texts, and octet_length() of each; here a short record. Kept by triggers, in the
      -- transaction of the write, so a search never sees an entry without it
      CREATE TABLE entry_sizes (
        rowid   INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        bytes   INTEGER NOT NULL
      ) STRICT;
      INSERT INTO entry_sizes (rowid, user_id, bytes)
        SELECT rowid, user_id, octet_length(content) + octet_length(coalesce(name, '')) FROM entries;
      CREATE TRIGGER entry_sizes_ai AFTER INSERT ON entries BEGIN
        INSERT OR REPLACE INTO entry_sizes (rowid, user_id, bytes) VALUES (new.rowid, new.user_id, octet_length(new.content) + octet_length(coalesce(new.name, '')));
      END;
      CREATE TRIGGER entry_sizes_ad AFTER DELETE ON entries BEGIN
        DELETE FROM entry_sizes WHERE rowid = old.rowid;
      END;
      CREATE TRIGGER entry_sizes_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        UPDATE entry_sizes SET user_id = new.user_id, bytes = octet_length(new.content) + octet_length(coalesce(new.name, '')) WHERE rowid = old.rowid;
      END;
    `,
  },
  {
    version: 14,
    name: "each user's count of entries that name their speaker, in text_stats",
    sql: `
      -- the retriever reads the speakers of a user's newest entries (SqliteLongTermStore.participants):
      -- a user none of whose entries names a speaker (a user and an assistant, unnamed) has none, which
      -- this count says without reading the entries
      ALTER TABLE text_stats ADD COLUMN named INTEGER NOT NULL DEFAULT 0;
      UPDATE text_stats SET named = (SELECT count(*) FROM entries e WHERE e.user_id = text_stats.user_id AND coalesce(e.name, '') != '');
      DROP TRIGGER IF EXISTS entries_stats_ai;
      DROP TRIGGER IF EXISTS entries_stats_ad;
      DROP TRIGGER IF EXISTS entries_stats_au;
      CREATE TRIGGER entries_stats_ai AFTER INSERT ON entries BEGIN
        INSERT INTO text_stats (user_id, docs, bytes, named)
          VALUES (new.user_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')), coalesce(new.name, '') != '')
          ON CONFLICT (user_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes, named = named + excluded.named;
      END;
      CREATE TRIGGER entries_stats_ad AFTER DELETE ON entries BEGIN
        UPDATE text_stats SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))),
          named = named - (coalesce(old.name, '') != '') WHERE user_id = old.user_id;
        DELETE FROM text_stats WHERE user_id = old.user_id AND docs <= 0;
      END;
      CREATE TRIGGER entries_stats_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        UPDATE text_stats SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))),
          named = named - (coalesce(old.name, '') != '') WHERE user_id = old.user_id;
        DELETE FROM text_stats WHERE user_id = old.user_id AND docs <= 0;
        INSERT INTO text_stats (user_id, docs, bytes, named)
          VALUES (new.user_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')), coalesce(new.name, '') != '')
          ON CONFLICT (user_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes, named = named + excluded.named;
      END;
    `,
  },
  {
    version: 15,
    name: 'a long turn has a vector per passage besides its whole text',
    sql: `
      -- part 0 is the entry's whole text, parts 1..n the passages of a long turn
      -- (src/embedding/passages.ts). A primary key cannot change in place: the table is rebuilt,
      -- rowids kept (the in-memory index and the change log name rows by them).
      CREATE TABLE vectors_v15 (
        id           TEXT NOT NULL,
        embedder     TEXT NOT NULL,
        part         INTEGER NOT NULL DEFAULT 0,
        dim          INTEGER NOT NULL,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        role         TEXT NOT NULL,
        name         TEXT,
        kind         TEXT NOT NULL,
        content      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        vector       BLOB NOT NULL,
        metadata     TEXT,
        PRIMARY KEY (user_id, id, embedder, part)
      ) STRICT;
      INSERT INTO vectors_v15 (rowid, id, embedder, part, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector, metadata)
        SELECT rowid, id, embedder, 0, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector, metadata FROM vectors;
      DROP TABLE vectors;
      ALTER TABLE vectors_v15 RENAME TO vectors;
      CREATE INDEX vectors_filter ON vectors (embedder, user_id, session_id, role, kind, created_at, metadata);
      -- the triggers went with the old table; the log still names (user, id, embedder): a reader
      -- re-reads every part of a logged entry
      CREATE TRIGGER vectors_log_insert AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (new.user_id, new.id, new.embedder, 'upsert');
      END;
      CREATE TRIGGER vectors_log_update AFTER UPDATE ON vectors BEGIN
        INSERT INTO vector_changes (user_id, id, embedder, op)
          SELECT old.user_id, old.id, old.embedder, 'delete'
          WHERE old.id IS NOT new.id OR old.embedder IS NOT new.embedder OR old.user_id IS NOT new.user_id;
        INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (new.user_id, new.id, new.embedder, 'upsert');
      END;
      CREATE TRIGGER vectors_log_delete AFTER DELETE ON vectors BEGIN
        INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (old.user_id, old.id, old.embedder, 'delete');
      END;
    `,
  },
  {
    version: 16,
    name: 'one token per owner in the text index',
    sql: `
      -- The text index held the owner's id as the tokenizer splits it, and a search narrowed its
      -- matches by the id's rarest word: a superset of the owner's rows whenever ids share words
      -- ("realmem-Sophie_Dubois~3"), so a tenant's query read postings of every tenant whose id looked
      -- alike (100k real turns of 80 users: 21 ms of FTS5 a query, 4 with one token). owner_token is
      -- the id's UTF-8 bytes in hex and a final digit: one token (hex digits are token characters), one
      -- per id (hex is injective), which no stemmer rule changes (none ends in a digit). Virtual: it is
      -- computed from user_id, never stored twice; the index reads it as external content.
      ALTER TABLE entries ADD COLUMN owner_token TEXT GENERATED ALWAYS AS (hex(user_id) || '0') VIRTUAL;
      DROP TRIGGER entries_ai;
      DROP TRIGGER entries_ad;
      DROP TRIGGER entries_au;
      DROP TABLE entries_fts;
      CREATE VIRTUAL TABLE entries_fts USING fts5(
        content, name, owner_token, content='entries', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
      );
      INSERT INTO entries_fts (entries_fts, rank) VALUES ('secure-delete', 1);
      CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts (rowid, content, name, owner_token) VALUES (new.rowid, new.content, coalesce(new.name, ''), new.owner_token);
      END;
      CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name, owner_token) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''), old.owner_token);
      END;
      CREATE TRIGGER entries_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name, owner_token) VALUES ('delete', old.rowid, old.content, coalesce(old.name, ''), old.owner_token);
        INSERT INTO entries_fts (rowid, content, name, owner_token) VALUES (new.rowid, new.content, coalesce(new.name, ''), new.owner_token);
      END;
      INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
    `,
  },
  {
    version: 17,
    name: "each session's entries and length, the user's session count, and each entry's session beside its length, for scoring a message's sessions",
    sql: `
      -- A chat message refers back to conversations: the text search scores sessions as documents
      -- (src/adapters/sqlite/bm25.ts, sessionScores), which needs every session's length, each user's
      -- session count, and the session of each matched row, read beside its length (entry_sizes.session:
      -- a session_sizes id, a number to compare, not a text). Kept by triggers, in the transaction of the
      -- write, as entry_sizes and text_stats are. entry_sizes' triggers find or make the session first,
      -- in the same trigger: the order in which SQLite fires two triggers of one event is not defined
      CREATE TABLE session_sizes (
        id         INTEGER PRIMARY KEY,
        user_id    TEXT NOT NULL,
        session_id TEXT NOT NULL,
        docs       INTEGER NOT NULL,
        bytes      INTEGER NOT NULL,
        UNIQUE (user_id, session_id)
      ) STRICT;
      CREATE TABLE session_counts (
        user_id  TEXT PRIMARY KEY,
        sessions INTEGER NOT NULL
      ) STRICT;
      CREATE TRIGGER session_counts_ai AFTER INSERT ON session_sizes BEGIN
        INSERT INTO session_counts (user_id, sessions) VALUES (new.user_id, 1) ON CONFLICT (user_id) DO UPDATE SET sessions = sessions + 1;
      END;
      CREATE TRIGGER session_counts_ad AFTER DELETE ON session_sizes BEGIN
        UPDATE session_counts SET sessions = sessions - 1 WHERE user_id = old.user_id;
        DELETE FROM session_counts WHERE user_id = old.user_id AND sessions <= 0;
      END;
      INSERT INTO session_sizes (user_id, session_id, docs, bytes)
        SELECT user_id, session_id, count(*), sum(octet_length(content) + octet_length(coalesce(name, ''))) FROM entries GROUP BY user_id, session_id;
      ALTER TABLE entry_sizes ADD COLUMN session INTEGER;
      UPDATE entry_sizes SET session = (SELECT s.id FROM entries e JOIN session_sizes s ON s.user_id = e.user_id AND s.session_id = e.session_id WHERE e.rowid = entry_sizes.rowid);
      DROP TRIGGER entry_sizes_ai;
      DROP TRIGGER entry_sizes_ad;
      DROP TRIGGER entry_sizes_au;
      CREATE TRIGGER entry_sizes_ai AFTER INSERT ON entries BEGIN
        INSERT INTO session_sizes (user_id, session_id, docs, bytes) VALUES (new.user_id, new.session_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')))
          ON CONFLICT (user_id, session_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes;
        INSERT OR REPLACE INTO entry_sizes (rowid, user_id, bytes, session)
          VALUES (new.rowid, new.user_id, octet_length(new.content) + octet_length(coalesce(new.name, '')), (SELECT id FROM session_sizes WHERE user_id = new.user_id AND session_id = new.session_id));
      END;
      CREATE TRIGGER entry_sizes_ad AFTER DELETE ON entries BEGIN
        DELETE FROM entry_sizes WHERE rowid = old.rowid;
        UPDATE session_sizes SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))) WHERE user_id = old.user_id AND session_id = old.session_id;
        DELETE FROM session_sizes WHERE user_id = old.user_id AND session_id = old.session_id AND docs <= 0;
      END;
      CREATE TRIGGER entry_sizes_au AFTER UPDATE OF content, name, user_id, session_id ON entries BEGIN
        UPDATE session_sizes SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))) WHERE user_id = old.user_id AND session_id = old.session_id;
        DELETE FROM session_sizes WHERE user_id = old.user_id AND session_id = old.session_id AND docs <= 0;
        INSERT INTO session_sizes (user_id, session_id, docs, bytes) VALUES (new.user_id, new.session_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')))
          ON CONFLICT (user_id, session_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes;
        UPDATE entry_sizes SET user_id = new.user_id, bytes = octet_length(new.content) + octet_length(coalesce(new.name, '')),
          session = (SELECT id FROM session_sizes WHERE user_id = new.user_id AND session_id = new.session_id) WHERE rowid = old.rowid;
      END;
    `,
  },
  {
    version: 18,
    name: "each entry's filtered attributes beside its length, so that a filtered text search reads no row of entries",
    sql: `
      -- A filtered text search tests each match's session, role, kind, time and metadata. Read from the
      -- row of entries, a match cost a descent into rows holding whole texts, past the content to the
      -- columns after it (100k real turns of one user: 2.8 µs a row, 5.6 of a filtered search's 8.5 ms);
      -- here they are in the short record the search already reads for the match's owner and length.
      -- Kept by the same triggers, in the transaction of the write
      ALTER TABLE entry_sizes ADD COLUMN session_id TEXT;
      ALTER TABLE entry_sizes ADD COLUMN role TEXT;
      ALTER TABLE entry_sizes ADD COLUMN kind TEXT;
      ALTER TABLE entry_sizes ADD COLUMN created_at TEXT;
      ALTER TABLE entry_sizes ADD COLUMN metadata TEXT;
      UPDATE entry_sizes SET (session_id, role, kind, created_at, metadata) =
        (SELECT e.session_id, e.role, e.kind, e.created_at, e.metadata FROM entries e WHERE e.rowid = entry_sizes.rowid);
      DROP TRIGGER entry_sizes_ai;
      DROP TRIGGER entry_sizes_au;
      CREATE TRIGGER entry_sizes_ai AFTER INSERT ON entries BEGIN
        INSERT INTO session_sizes (user_id, session_id, docs, bytes) VALUES (new.user_id, new.session_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')))
          ON CONFLICT (user_id, session_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes;
        INSERT OR REPLACE INTO entry_sizes (rowid, user_id, bytes, session, session_id, role, kind, created_at, metadata)
          VALUES (new.rowid, new.user_id, octet_length(new.content) + octet_length(coalesce(new.name, '')), (SELECT id FROM session_sizes WHERE user_id = new.user_id AND session_id = new.session_id),
            new.session_id, new.role, new.kind, new.created_at, new.metadata);
      END;
      CREATE TRIGGER entry_sizes_au AFTER UPDATE OF content, name, user_id, session_id, role, kind, created_at, metadata ON entries BEGIN
        UPDATE session_sizes SET docs = docs - 1, bytes = bytes - (octet_length(old.content) + octet_length(coalesce(old.name, ''))) WHERE user_id = old.user_id AND session_id = old.session_id;
        DELETE FROM session_sizes WHERE user_id = old.user_id AND session_id = old.session_id AND docs <= 0;
        INSERT INTO session_sizes (user_id, session_id, docs, bytes) VALUES (new.user_id, new.session_id, 1, octet_length(new.content) + octet_length(coalesce(new.name, '')))
          ON CONFLICT (user_id, session_id) DO UPDATE SET docs = docs + 1, bytes = bytes + excluded.bytes;
        UPDATE entry_sizes SET user_id = new.user_id, bytes = octet_length(new.content) + octet_length(coalesce(new.name, '')),
          session = (SELECT id FROM session_sizes WHERE user_id = new.user_id AND session_id = new.session_id),
          session_id = new.session_id, role = new.role, kind = new.kind, created_at = new.created_at, metadata = new.metadata WHERE rowid = old.rowid;
      END;
    `,
  },
  {
    version: 19,
    name: "a count of changed and deleted entries, for what text search keeps of matched rows (src/adapters/sqlite/match-records.ts)",
    sql: `
      -- A connection keeps what it read of matched rows (owner, length, session, recorded repeats) while
      -- this count stands. An insert is a new rowid and changes nothing kept; a change of an entry's text,
      -- owner or session, or a delete (its rowid may be taken again), adds one, in the write's transaction
      CREATE TABLE entry_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL) STRICT;
      INSERT INTO entry_changes (id, n) VALUES (1, 0);
      CREATE TRIGGER entry_changes_ad AFTER DELETE ON entries BEGIN
        UPDATE entry_changes SET n = n + 1 WHERE id = 1;
      END;
      CREATE TRIGGER entry_changes_au AFTER UPDATE OF content, name, user_id, session_id ON entries
        WHEN old.content IS NOT new.content OR old.name IS NOT new.name OR old.user_id IS NOT new.user_id OR old.session_id IS NOT new.session_id BEGIN
        UPDATE entry_changes SET n = n + 1 WHERE id = 1;
      END;
    `,
  },
  {
    version: 20,
    name: "a change of an entry's role, kind, time or metadata counted too, for the attributes text search keeps of matched rows",
    sql: `
      -- A filtered text search tests the attributes a connection keeps of matched rows
      -- (src/adapters/sqlite/match-records.ts), kept while entry_changes stands: a change of any of them
      -- adds one as a change of the text does
      DROP TRIGGER entry_changes_au;
      CREATE TRIGGER entry_changes_au AFTER UPDATE OF content, name, user_id, session_id, role, kind, created_at, metadata ON entries
        WHEN old.content IS NOT new.content OR old.name IS NOT new.name OR old.user_id IS NOT new.user_id OR old.session_id IS NOT new.session_id
          OR old.role IS NOT new.role OR old.kind IS NOT new.kind OR old.created_at IS NOT new.created_at OR old.metadata IS NOT new.metadata BEGIN
        UPDATE entry_changes SET n = n + 1 WHERE id = 1;
      END;
    `,
  },
  {
    version: 21,
    name: "the text index holds each user's words apart: every word prefixed by its owner's (src/adapters/sqlite/owned-text.ts)",
    sql: `
      -- Each word of an entry is indexed as its owner's prefix and the word, so a word's posting list is
      -- one user's and no read is intersected with an owner's list (owner_token, migration 16, goes).
      -- The prefixed text is the index's alone (contentless): a delete gives the index the prefixed text
      -- again, computed as the insert computed it, so that secure-delete takes its words out of the
      -- index's pages (contentless_delete would leave them there, under a tombstone, until a merge).
      -- The triggers call ${OWNED_TEXT_FUNCTION}, which every connection registers.
      DROP TRIGGER entries_ai;
      DROP TRIGGER entries_ad;
      DROP TRIGGER entries_au;
      DROP TABLE entries_fts;
      ALTER TABLE entries DROP COLUMN owner_token;
      CREATE VIRTUAL TABLE entries_fts USING fts5(
        content, name, content='', tokenize='porter unicode61 remove_diacritics 2'
      );
      INSERT INTO entries_fts (entries_fts, rank) VALUES ('secure-delete', 1);
      CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts (rowid, content, name) VALUES (new.rowid, ${OWNED_TEXT_FUNCTION}(new.user_id, new.content), ${OWNED_TEXT_FUNCTION}(new.user_id, coalesce(new.name, '')));
      END;
      CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name) VALUES ('delete', old.rowid, ${OWNED_TEXT_FUNCTION}(old.user_id, old.content), ${OWNED_TEXT_FUNCTION}(old.user_id, coalesce(old.name, '')));
      END;
      CREATE TRIGGER entries_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
        INSERT INTO entries_fts (entries_fts, rowid, content, name) VALUES ('delete', old.rowid, ${OWNED_TEXT_FUNCTION}(old.user_id, old.content), ${OWNED_TEXT_FUNCTION}(old.user_id, coalesce(old.name, '')));
        INSERT INTO entries_fts (rowid, content, name) VALUES (new.rowid, ${OWNED_TEXT_FUNCTION}(new.user_id, new.content), ${OWNED_TEXT_FUNCTION}(new.user_id, coalesce(new.name, '')));
      END;
      INSERT INTO entries_fts (rowid, content, name) SELECT rowid, ${OWNED_TEXT_FUNCTION}(user_id, content), ${OWNED_TEXT_FUNCTION}(user_id, coalesce(name, '')) FROM entries;
    `,
  },
  {
    version: 22,
    name: "every update of an entry counted, for the entries' rows text search keeps (src/adapters/sqlite/match-records.ts)",
    sql: `
      -- A connection keeps the entries' rows its searches returned (their importance, pin, hash and
      -- times too) while entry_changes stands: an update of any column adds one. Updates are edits and
      -- repairs, rare beside the writes of new entries, which add nothing
      DROP TRIGGER entry_changes_au;
      CREATE TRIGGER entry_changes_au AFTER UPDATE ON entries BEGIN
        UPDATE entry_changes SET n = n + 1 WHERE id = 1;
      END;
    `,
  },
  {
    version: 23,
    name: 'the archives indexed apart, for the archival run that pages through them (src/adapters/sqlite/archive-store.ts, archives)',
    sql: `
      -- Paged by rowid with kind tested on each row, a page of archives read every entry, text and all,
      -- until it filled: the whole table once in a store with few archives (100k turns: ~60 ms of one
      -- statement). This index holds the archives alone, in rowid order
      CREATE INDEX IF NOT EXISTS entries_archives ON entries (kind) WHERE kind = 'archive';
    `,
  },
];
