import type { Postgres } from './pool.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Versioned schema of the PostgreSQL database, applied in order, each in its own transaction;
 * `schema_migrations` records the ones applied. Never edit a released migration: add one.
 *
 * Keys follow the SQLite file's: a memory is (user_id, id), so every index a user's read goes
 * through starts with user_id (the full-text index too: GIN over (user_id, tsv), through btree_gin,
 * so a query reads only its user's postings). The only indexes that do not are the work queues read
 * across users by the reconciler and the change-log readers (pending jobs, vector changes, erasure
 * signals), where no user's data is selected by them.
 *
 * Times are timestamptz (read back as canonical ISO strings); epoch milliseconds (accepted_at,
 * persisted_at, queued_at) stay int8 as in SQLite.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'turn log, long-term entries with full-text search, embedded vectors and their change log, archival, erasure signals',
    sql: `
      -- btree_gin: user_id inside the GIN index; unaccent: "José" matches "jose" (SQLite's
      -- remove_diacritics). Both are trusted extensions: the database owner may create them.
      CREATE EXTENSION IF NOT EXISTS btree_gin;
      CREATE EXTENSION IF NOT EXISTS unaccent;
      CREATE TEXT SEARCH CONFIGURATION nc_english (COPY = pg_catalog.english);
      ALTER TEXT SEARCH CONFIGURATION nc_english ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;

      -- The turn log: every accepted turn, durable before it is acknowledged (the outbox).
      CREATE TABLE turns (
        user_id       text NOT NULL,
        id            text NOT NULL,
        seq           bigint GENERATED ALWAYS AS IDENTITY,
        session_id    text NOT NULL,
        role          text NOT NULL,
        name          text,
        content       text NOT NULL,
        content_hash  text NOT NULL,
        created_at    timestamptz NOT NULL,
        importance    double precision,
        pinned        boolean NOT NULL DEFAULT false,
        metadata      jsonb,
        accepted_at   bigint NOT NULL,
        embedded_with text,
        persisted_at  bigint,
        PRIMARY KEY (user_id, id)
      );
      CREATE INDEX turns_user_session ON turns (user_id, session_id, created_at, seq);
      CREATE INDEX turns_pending_embed ON turns (seq) WHERE embedded_with IS NULL;
      CREATE INDEX turns_pending_persist ON turns (seq) WHERE persisted_at IS NULL;
      CREATE UNIQUE INDEX turns_seq ON turns (seq);

      CREATE TABLE entries (
        user_id      text NOT NULL,
        id           text NOT NULL,
        seq          bigint GENERATED ALWAYS AS IDENTITY,
        session_id   text NOT NULL,
        role         text NOT NULL,
        name         text,
        kind         text NOT NULL CHECK (kind IN ('turn', 'summary', 'archive')),
        content      text NOT NULL,
        content_hash text NOT NULL,
        importance   double precision NOT NULL,
        pinned       boolean NOT NULL DEFAULT false,
        metadata     jsonb,
        covers       jsonb,
        created_at   timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL,
        -- participant name weighs double in the ranking (A), content once (B)
        tsv          tsvector GENERATED ALWAYS AS (
                       setweight(to_tsvector('nc_english', coalesce(name, '')), 'A') || setweight(to_tsvector('nc_english', content), 'B')
                     ) STORED,
        PRIMARY KEY (user_id, id)
      );
      CREATE INDEX entries_user_created ON entries (user_id, created_at, seq);
      CREATE INDEX entries_user_session ON entries (user_id, session_id, created_at);
      CREATE INDEX entries_user_hash ON entries (user_id, content_hash);
      CREATE INDEX entries_user_kind ON entries (user_id, kind);
      CREATE INDEX entries_fts ON entries USING gin (user_id, tsv);
      CREATE UNIQUE INDEX entries_seq ON entries (seq);

      -- Embedded semantic tier: one row per (memory, embedder); vectors are little-endian float32.
      CREATE TABLE vectors (
        user_id      text NOT NULL,
        id           text NOT NULL,
        embedder     text NOT NULL,
        seq          bigint GENERATED ALWAYS AS IDENTITY,
        dim          integer NOT NULL,
        session_id   text NOT NULL,
        role         text NOT NULL,
        name         text,
        kind         text NOT NULL,
        content      text NOT NULL,
        content_hash text NOT NULL,
        created_at   timestamptz NOT NULL,
        metadata     jsonb,
        vector       bytea NOT NULL,
        PRIMARY KEY (user_id, id, embedder)
      );
      CREATE INDEX vectors_embedder_user ON vectors (embedder, user_id);
      CREATE UNIQUE INDEX vectors_seq ON vectors (seq);

      -- Every write to vectors, logged by triggers in the writer's transaction: each process's
      -- in-memory index replays "seq > last seen" to see every other process's writes, on any host.
      -- Writers take one transaction-level advisory lock (see vector-store.ts), so seqs commit in order.
      CREATE TABLE vector_changes (
        seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id  text NOT NULL,
        id       text NOT NULL,
        embedder text NOT NULL,
        op       text NOT NULL CHECK (op IN ('upsert', 'delete'))
      );
      CREATE TABLE vector_changes_state (
        one            integer PRIMARY KEY CHECK (one = 1),
        pruned_through bigint NOT NULL
      );
      INSERT INTO vector_changes_state (one, pruned_through) VALUES (1, 0);
      CREATE FUNCTION vectors_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          IF TG_OP = 'DELETE' OR (OLD.user_id, OLD.id, OLD.embedder) IS DISTINCT FROM (NEW.user_id, NEW.id, NEW.embedder) THEN
            INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (OLD.user_id, OLD.id, OLD.embedder, 'delete');
          END IF;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (NEW.user_id, NEW.id, NEW.embedder, 'upsert');
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER vectors_log AFTER INSERT OR UPDATE OR DELETE ON vectors FOR EACH ROW EXECUTE FUNCTION vectors_log();

      -- Ids whose vectors must go, written in the transaction that removes their rows, so a vector
      -- backend that fails (Qdrant down) is retried instead of leaving searchable orphans.
      CREATE TABLE vector_deletes (
        user_id   text NOT NULL,
        id        text NOT NULL,
        queued_at bigint NOT NULL,
        PRIMARY KEY (user_id, id)
      );

      -- One row per invocation of the archive processor (scheduled or by hand).
      CREATE TABLE archive_runs (
        seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id      text NOT NULL,
        trigger     text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
        outcome     text NOT NULL CHECK (outcome IN ('running', 'done', 'failed', 'duplicate')),
        dry_run     boolean NOT NULL,
        cutoff      text NOT NULL,
        sessions    integer NOT NULL DEFAULT 0,
        replaced    integer NOT NULL DEFAULT 0,
        error       text,
        pid         integer NOT NULL,
        started_at  text NOT NULL,
        finished_at text
      );
      CREATE INDEX archive_runs_run ON archive_runs (run_id);

      -- One row per erasure (forget, clear), for processes holding state of their own (an in-process
      -- short-term store or queue) to erase their copy too. user_id NULL: every user.
      CREATE TABLE erasures (
        seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id    text,
        session_id text,
        pid        integer NOT NULL,
        at         bigint NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'every writer of vectors takes the change-log lock, so change seqs commit in order whoever writes',
    sql: `
      -- The transaction-level advisory lock VECTOR_WRITE_LOCK (vector-store.ts) is taken by the first
      -- row a transaction writes to vectors and held to its commit: writers of vectors (the embedded
      -- index, erasures, archival) run one at a time, so a seq is visible only after every smaller one.
      CREATE OR REPLACE FUNCTION vectors_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(1852012147);
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          IF TG_OP = 'DELETE' OR (OLD.user_id, OLD.id, OLD.embedder) IS DISTINCT FROM (NEW.user_id, NEW.id, NEW.embedder) THEN
            INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (OLD.user_id, OLD.id, OLD.embedder, 'delete');
          END IF;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO vector_changes (user_id, id, embedder, op) VALUES (NEW.user_id, NEW.id, NEW.embedder, 'upsert');
        END IF;
        RETURN NULL;
      END $$;
    `,
  },
  {
    version: 3,
    name: 'processes confirm the erasures they applied',
    sql: `
      -- One row per process holding state of its own (an in-process short-term store or queue): the
      -- last erasure signal it applied, and when it last said so.
      CREATE TABLE erasure_listeners (
        pid          integer PRIMARY KEY,
        seen_seq     bigint NOT NULL,
        heartbeat_at bigint NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'erasure signals and listeners name a process by instance id (host, pid, random part)',
    sql: `
      -- A pid names a process on its own host only: API and worker processes of several hosts share
      -- this database, and two of them with one pid would share a listener row (one's heartbeat
      -- confirming for the other) and skip each other's signals. Both tables hold minutes of state:
      -- listeners re-register at their next heartbeat; signals already applied keep their seq.
      ALTER TABLE erasures DROP COLUMN pid;
      ALTER TABLE erasures ADD COLUMN instance text NOT NULL DEFAULT '';
      DROP TABLE erasure_listeners;
      CREATE TABLE erasure_listeners (
        instance     text PRIMARY KEY,
        seen_seq     bigint NOT NULL,
        heartbeat_at bigint NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "a change row per statement that writes a user's entries, so cached BM25 statistics are exact across processes",
    sql: `
      -- The long-term store keeps a user's BM25 statistics (entry count, mean length, document
      -- frequencies) with the snapshot it read them in, and uses them only while no change row of
      -- that user has committed since (its xid not visible in that snapshot): exact whichever process
      -- wrote. Rows are only inserted, so writers never wait on each other here; the store deletes
      -- those older than an hour (it keeps no statistics half that old).
      CREATE TABLE entry_changes (
        user_id text NOT NULL,
        xid     xid8 NOT NULL DEFAULT pg_current_xact_id(),
        at      timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX entry_changes_user_xid ON entry_changes (user_id, xid);
      CREATE INDEX entry_changes_at ON entry_changes (at);
      CREATE FUNCTION entries_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO entry_changes (user_id) SELECT DISTINCT user_id FROM changed;
        RETURN NULL;
      END $$;
      CREATE TRIGGER entries_inserted AFTER INSERT ON entries REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION entries_changed();
      CREATE TRIGGER entries_updated AFTER UPDATE ON entries REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION entries_changed();
      CREATE TRIGGER entries_deleted AFTER DELETE ON entries REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION entries_changed();
    `,
  },
  {
    version: 6,
    name: 'a delete, edit or prune is signalled to the processes holding a short-term tier of their own',
    sql: `
      -- 'erase': forget and clear (everything in scope goes); 'settle': a delete, edit or prune (each
      -- process checks its short-term copies in scope against the turn log)
      ALTER TABLE erasures ADD COLUMN action text NOT NULL DEFAULT 'erase' CHECK (action IN ('erase', 'settle'));
    `,
  },
  {
    version: 7,
    name: "a filtered vector search reads the filter's columns from an index, not from the vectors' rows",
    sql: `
      -- A filtered search of the embedded index first lists the user's vectors the filter allows
      -- (PostgresVectorStore.matching): with (embedder, user_id) alone that read each row of the user
      -- (its vector and text: a few rows a page) or the whole table. This index carries the columns
      -- the filter kinds other than metadata compare (an index-only scan once VACUUM has marked the
      -- pages all-visible); metadata stays in the rows: a jsonb of any size cannot go into an index
      -- entry. Same key as the index it replaces, so the other readers (counts per user) keep it.
      CREATE INDEX vectors_embedder_user_filter ON vectors (embedder, user_id) INCLUDE (seq, session_id, role, kind, created_at);
      DROP INDEX vectors_embedder_user;
    `,
  },
  {
    version: 8,
    name: 'a long turn has a vector per passage besides its whole text',
    sql: `
      -- part 0 is the entry's whole text, parts 1..n the passages of a long turn
      -- (src/embedding/passages.ts); the key takes the part. Existing rows are whole texts.
      ALTER TABLE vectors ADD COLUMN part integer NOT NULL DEFAULT 0;
      ALTER TABLE vectors DROP CONSTRAINT vectors_pkey;
      ALTER TABLE vectors ADD PRIMARY KEY (user_id, id, embedder, part);
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The advisory lock every process takes to migrate: one key for this service's schema. */
const MIGRATION_LOCK = 0x6e63_6d67; // "ncmg"

/**
 * Brings the database's schema up to date and returns the versions this call applied. Any number of
 * processes may call it at the same moment: each waits for the session-level advisory lock, then
 * applies only what is still missing, so every migration runs exactly once. A database whose schema
 * is newer than this build is refused rather than written.
 */
export async function migrate(pg: Postgres, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return pg.session(async (c) => {
    await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await c.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), pid integer NOT NULL)`,
      );
      const done = new Set((await c.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      const latest = migrations[migrations.length - 1]?.version ?? 0;
      const newest = Math.max(0, ...done);
      if (newest > latest) throw new Error(`the database's schema version ${newest} is newer than this build's ${latest}: upgrade neuralcleave`);
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.sql);
          await c.query('INSERT INTO schema_migrations (version, name, pid) VALUES ($1, $2, $3)', [m.version, m.name, process.pid]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {});
          throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  });
}
