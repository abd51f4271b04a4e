import { embedJob, persistJob } from '../../queues/producers.js';
import { randomUUID } from 'node:crypto';
import type { JobQueue } from '../../queues/queue.js';
import { contentHash } from '../domain/hash.js';
import { MAX_TURNS_PER_WRITE, type Turn, type TurnInputSchema } from '../domain/turn.js';
import { ContentConflictError, NeuralCleaveError, ValidationError, zodDetails, describeDetails, type ErrorDetail } from '../errors.js';
import type { Logger } from '../logger.js';
import { room } from '../pace.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { TurnLog } from '../ports/turn-log.js';
import { SameTick } from './same-tick.js';

export interface AddTurnsResult {
  /** the id of every turn sent, in order (a duplicate's id is the stored one) */
  ids: string[];
  accepted: number;
  duplicates: number;
}

export interface WritePathDeps {
  schema: TurnInputSchema;
  turnLog: TurnLog;
  shortTerm: ShortTermStore;
  queue: JobQueue;
  log: Logger;
  /** called with the turns just accepted, after they are durable (compaction check, metrics) */
  onAccepted?: (turns: readonly Turn[]) => void;
  /**
   * where validated turns are accepted, when not here: an HTTP process of `serve --processes N` hands
   * them to the primary's write path, so one process writes the turn log and its group commits span
   * every HTTP process (two writers of one SQLite file would wait on each other's locks)
   */
  acceptIn?: (turns: readonly Turn[]) => Promise<AcceptResult>;
}

export interface AcceptResult {
  accepted: number;
  duplicates: number;
}

/**
 * The turn log's conflict names the turn by its position in the batch ("3.id"), even when it comes
 * from the primary process (serve --processes: typed errors cross as code and details); here it names
 * the field as the client sent it ("turns.3.id", or "id" for a single turn).
 */
function conflictAt(err: unknown, turns: readonly Turn[], pathPrefix: string | undefined): unknown {
  if (!(err instanceof NeuralCleaveError) || err.code !== 'content_conflict') return err;
  const at = (err.details?.[0]?.path ?? '').match(/^(\d+)\.id$/);
  const i = at ? Number(at[1]) : -1;
  const id = turns[i]?.id;
  if (id === undefined) return err;
  const prefix = pathPrefix !== undefined ? `${pathPrefix}.${i}.` : turns.length > 1 ? `${i}.` : '';
  return new ContentConflictError(id, i, `${prefix}id`);
}

/**
 * The write path of docs/architecture.md, write path: validate every turn (all or nothing), append them to the turn log (the
 * durable outbox) in one transaction (shared with concurrent writes: a group commit), write the short-term tier, enqueue `embed` and `persist`. Only the
 * turn log must succeed for the write to be acknowledged: a failing short-term store or queue is logged
 * and the reconciler re-enqueues from the turn log.
 */
export class WritePath {
  /** the short-term write and the jobs of the accepts that committed together, done together */
  private readonly fanOut = new SameTick<Turn, void>(async (turns) => {
    try {
      await this.deps.shortTerm.push(turns);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, backend: this.deps.shortTerm.backend }, 'short-term write failed; the turns are durable in the turn log');
    }
    await this.enqueue(turns);
  });

  constructor(private readonly deps: WritePathDeps) {}

  /** Validates and normalizes; throws ValidationError naming each bad field, storing nothing. */
  validate(inputs: readonly unknown[], pathPrefix?: string): Turn[] {
    const check = this.checker(inputs, pathPrefix);
    inputs.forEach(check.add);
    return check.turns();
  }

  /**
   * `validate`, a turn at a time in the process's slices of work (src/pace.ts): 30 turns of 32,000
   * characters took ~35 ms to check and hash.
   */
  private async validateSoon(inputs: readonly unknown[], pathPrefix?: string): Promise<Turn[]> {
    const check = this.checker(inputs, pathPrefix);
    for (const [i, input] of inputs.entries()) {
      await room();
      check.add(input, i);
    }
    return check.turns();
  }

  /** the checks of one write: `add` each input in order, then `turns` (or the ValidationError naming every bad field) */
  private checker(inputs: readonly unknown[], pathPrefix?: string): { add: (input: unknown, i: number) => void; turns: () => Turn[] } {
    if (inputs.length === 0) throw new ValidationError('no turns given', [{ path: pathPrefix ?? 'turns', message: 'must hold at least one turn' }]);
    if (inputs.length > MAX_TURNS_PER_WRITE) {
      throw new ValidationError(`too many turns in one write (${inputs.length})`, [
        { path: pathPrefix ?? 'turns', message: `at most ${MAX_TURNS_PER_WRITE} turns per write` },
      ]);
    }
    const details: ErrorDetail[] = [];
    const turns: Turn[] = [];
    const now = Date.now();
    const add = (input: unknown, i: number) => {
      const parsed = this.deps.schema.safeParse(input);
      if (!parsed.success) {
        const prefix = pathPrefix !== undefined ? `${pathPrefix}.${i}.` : inputs.length > 1 ? `${i}.` : '';
        for (const d of zodDetails(parsed.error.issues)) details.push({ path: prefix + (d.path === '(root)' ? '' : d.path) || '(root)', message: d.message });
        return;
      }
      const t = parsed.data;
      turns.push({
        id: t.id ?? randomUUID(),
        user_id: t.user_id,
        session_id: t.session_id,
        role: t.role,
        name: t.name ?? null,
        content: t.content,
        content_hash: contentHash(t.content),
        // one canonical form, so that stored timestamps compare as strings; turns of one batch keep their order
        created_at: new Date(t.created_at ?? now + i).toISOString(),
        importance: t.importance ?? null,
        pinned: t.pinned,
        metadata: t.metadata ?? null,
      });
    };
    return {
      add,
      turns: () => {
        if (details.length > 0) throw new ValidationError(`invalid turn: ${describeDetails(details)}`, details);
        return turns;
      },
    };
  }

  async addTurns(inputs: readonly unknown[], pathPrefix?: string): Promise<AddTurnsResult> {
    const turns = await this.validateSoon(inputs, pathPrefix);
    const { accepted, duplicates } = await (this.deps.acceptIn ? this.deps.acceptIn(turns) : this.accept(turns)).catch((err: unknown) => {
      throw conflictAt(err, turns, pathPrefix);
    });
    return { ids: turns.map((t) => t.id), accepted, duplicates };
  }

  /**
   * Appends validated turns to the turn log (a group commit), then the short-term write and the jobs
   * (shared with the accepts that committed in the same group).
   */
  async accept(turns: readonly Turn[]): Promise<AcceptResult> {
    const { accepted, duplicates } = await this.deps.turnLog.append(turns);
    if (accepted.length > 0) {
      await this.fanOut.add(accepted);
      this.deps.onAccepted?.(accepted);
    }
    return { accepted: accepted.length, duplicates: duplicates.length };
  }

  /**
   * Enqueues the turns' jobs; a queue failure leaves them pending in the turn log for the reconciler.
   * `requeue` (the reconciler): a job of theirs that failed for good is replaced (JobQueue.requeue).
   */
  async enqueue(
    turns: readonly Turn[],
    which: { embed: boolean; persist: boolean } = { embed: true, persist: true },
    how: 'add' | 'requeue' = 'add',
  ): Promise<boolean> {
    const queue = this.deps.queue;
    const put = how === 'requeue' ? queue.requeue.bind(queue) : queue.add.bind(queue);
    try {
      await Promise.all([
        which.embed
          ? put(
              'embed',
              turns.map((t) => embedJob(t)),
            )
          : undefined,
        which.persist ? put('persist', turns.map((t) => persistJob(t))) : undefined,
      ]);
      return true;
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, turns: turns.length }, 'enqueue failed; the turns stay pending in the turn log and will be re-enqueued');
      return false;
    }
  }
}
