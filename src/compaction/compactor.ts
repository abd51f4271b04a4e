import { embedJob } from '../../queues/producers.js';
import type { JobQueue } from '../../queues/queue.js';
import type { MemoryEntry } from '../domain/entry.js';
import { contentHash, shortHash } from '../domain/hash.js';
import { recordOf } from '../domain/record.js';
import { generatedId, storableGenerated, type Turn } from '../domain/turn.js';
import { subjectOf, type Logger } from '../logger.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { TurnLog } from '../ports/turn-log.js';
import { SUMMARY_HEADING, isSummaryTurn, type Summarizer } from './summarizers/summarizer.js';
import type { TokenCounter } from './tokens.js';

export interface CompactorDeps {
  shortTerm: ShortTermStore;
  turnLog: TurnLog;
  longTerm: LongTermStore;
  queue: JobQueue;
  summarizer: Summarizer;
  tokens: TokenCounter;
  log: Logger;
  /** newest ordinary turns kept verbatim beside the summary (`compaction_keep_turns`) */
  keepTurns: number;
  summaryMaxTokens: number;
  /** a session above this many tokens needs compaction: compaction_threshold × context_window */
  limitTokens: number;
  /** longest storable text (`max_turn_chars`) */
  maxChars?: number;
}

const DEFAULT_MAX_CHARS = 32_000;

export type CompactionReason = 'threshold' | 'manual';

export interface CompactionResult {
  status: 'compacted' | 'below_threshold' | 'nothing_to_compact' | 'session_gone';
  user_id: string;
  session_id: string;
  /** where the conversation was read from: the short-term tier, or the turn log when it held nothing */
  source: 'short_term' | 'turn_log';
  summary_id: string | null;
  summary: string | null;
  summarizer: string | null;
  /** every turn id the summary stands for, including those of the earlier summary it folds in */
  covers: string[];
  /** turns newly summarized by this compaction */
  summarized: number;
  /** pinned and newest turns left verbatim in the short-term tier */
  kept: number;
  tokens_before: number;
  tokens_after: number;
}

export interface CompactorCounters {
  runs: number;
  compacted: number;
  skipped: number;
  failures: number;
}

/** the importance every summary is stored with: above the default threshold, below a pinned fact */
export const SUMMARY_IMPORTANCE = 0.7;
/** the shortest cap a summary gets, however little it replaces */
const MIN_SUMMARY_TOKENS = 64;

/**
 * Compaction (docs/architecture.md, compaction and archival): summarizes a session's conversation, persists the summary to the long-term
 * tier (`kind = "summary"`, `covers` = the turn ids it stands for), enqueues its `embed` job, and
 * replaces the session's short-term history with
 *
 *   [summary turn (role "system"), pinned turns, the newest `keepTurns` ordinary turns]
 *
 * — pinned turns are never summarized away; the newest turns stay verbatim so the conversation reads
 * on naturally (they are cut further while they alone would exceed a quarter of the limit). A summary
 * is at most `summaryMaxTokens` long, a quarter of the limit, and half of what it replaces — so after
 * a compaction the session holds at most about half the limit besides its pinned turns. An earlier
 * summary is folded into the new one, whose `covers` then include the earlier one's.
 *
 * Idempotent under a retried job: the summary's id derives from (user, session, covered ids), a
 * summary already stored under it is reused rather than re-summarized, and once a session is
 * compacted there is nothing left to summarize. Turns that arrive while the summarizer runs are kept.
 * One compaction per session runs at a time in a process: a second call joins the running one.
 */
export class ConversationCompactor {
  private readonly running = new Map<string, Promise<CompactionResult>>();
  private readonly stats: CompactorCounters = { runs: 0, compacted: 0, skipped: 0, failures: 0 };
  private readonly settledListeners: Array<(userId: string, sessionId: string) => void> = [];

  constructor(private readonly deps: CompactorDeps) {}

  get summarizerId(): string {
    return this.deps.summarizer.id;
  }

  counters(): Readonly<CompactorCounters> {
    return { ...this.stats };
  }

  /** `fn` hears of every compaction that ends in this process, whatever its outcome */
  onSettled(fn: (userId: string, sessionId: string) => void): void {
    this.settledListeners.push(fn);
  }

  compact(userId: string, sessionId: string, reason: CompactionReason = 'manual'): Promise<CompactionResult> {
    const key = `${userId}\u0000${sessionId}`;
    const inFlight = this.running.get(key);
    if (inFlight) return inFlight;
    this.stats.runs++;
    const run = this.run(userId, sessionId, reason).then(
      (r) => {
        if (r.status === 'compacted') this.stats.compacted++;
        else this.stats.skipped++;
        return r;
      },
      (err: unknown) => {
        this.stats.failures++;
        this.deps.log.error({ err: (err as Error).message, subject: subjectOf(userId, sessionId), reason }, 'compaction failed; the session is unchanged');
        throw err;
      },
    );
    this.running.set(key, run);
    const settle = () => {
      this.running.delete(key);
      for (const fn of this.settledListeners) fn(userId, sessionId);
    };
    run.then(settle, settle);
    return run;
  }

  private async run(userId: string, sessionId: string, reason: CompactionReason): Promise<CompactionResult> {
    const { deps } = this;
    const { turns, source } = await this.conversation(userId, sessionId);
    // counted a slice of the event loop at a time (a session read from the turn log after a restart
    // is counted here first), so the session() sums below are lookups
    await deps.tokens.sessionSoon(turns);
    const base: CompactionResult = {
      status: 'nothing_to_compact',
      user_id: userId,
      session_id: sessionId,
      source,
      summary_id: null,
      summary: null,
      summarizer: null,
      covers: [],
      summarized: 0,
      kept: turns.length,
      tokens_before: deps.tokens.session(turns),
      tokens_after: 0,
    };
    base.tokens_after = base.tokens_before;
    if (reason === 'threshold' && base.tokens_before <= deps.limitTokens) return { ...base, status: 'below_threshold' };

    const earlier = turns.filter(isSummaryTurn);
    const ordinary = turns.filter((t) => !t.pinned && !isSummaryTurn(t));
    const kept = this.keep(ordinary);
    const keptIds = new Set(kept.map((t) => t.id));
    const fresh = ordinary.filter((t) => !keptIds.has(t.id));
    if (fresh.length === 0) return base;
    // the session was forgotten while we read it: write nothing about it
    if (!(await anyLogged(deps.turnLog, userId, fresh))) return { ...base, status: 'session_gone' };

    const covers = unique([...(await this.coversOf(earlier)), ...fresh.map((t) => t.id)]);
    const summaryId = generatedId('summary', shortHash(`${userId}\u0000${sessionId}\u0000${covers.join('\u0000')}`));
    const newest = fresh[fresh.length - 1]!;

    let entry = await deps.longTerm.get(userId, summaryId);
    if (!entry) {
      const input = [...earlier, ...fresh];
      // never longer than half of what it replaces, nor than a quarter of the limit: a compaction
      // always shrinks the session, well under the limit, so the next reply does not compact again
      const share = Math.min(Math.floor(deps.tokens.session(input) / 2), Math.floor(deps.limitTokens / 4));
      const maxTokens = Math.min(deps.summaryMaxTokens, Math.max(MIN_SUMMARY_TOKENS, share));
      // the heading names the session and the span: what the summary is, and distinct from any other
      const heading = `${SUMMARY_HEADING} (session ${sessionId}, ${covers.length} turns up to ${newest.created_at.slice(0, 16)}Z):`;
      const out = await deps.summarizer.summarize({ turns: input, maxTokens: Math.max(16, maxTokens - deps.tokens.count(heading) - 1) });
      const body = out.text.trim();
      if (body === '') throw new Error(`summarizer ${out.by} returned an empty summary`);
      // an LLM's text is held to what a client may send: no control characters, no broken surrogates
      const text = storableGenerated(deps.tokens.truncate(`${heading}\n${body}`, maxTokens), deps.maxChars ?? DEFAULT_MAX_CHARS);
      const now = new Date().toISOString();
      entry = {
        id: summaryId,
        user_id: userId,
        session_id: sessionId,
        role: 'system',
        name: null,
        kind: 'summary',
        content: text,
        content_hash: contentHash(text),
        importance: SUMMARY_IMPORTANCE,
        pinned: false,
        metadata: { summarizer: out.by, reason, source },
        covers,
        // the summary stands where the last turn it covers stood: a retry gives the same entry
        created_at: newest.created_at,
        updated_at: now,
      } satisfies MemoryEntry;
      await deps.longTerm.upsert([entry]);
    }

    await deps.queue.add('embed', [embedJob(entry, 'summary')]);

    const summaryTurn: Turn = { ...entryToTurn(entry), importance: SUMMARY_IMPORTANCE };
    const after = await this.replaceHistory(summaryTurn, new Set(covers), source === 'turn_log' ? turns : []);
    const result: CompactionResult = {
      ...base,
      status: 'compacted',
      summary_id: summaryId,
      summary: entry.content,
      summarizer: summaryTurn.metadata!.summarizer as string | null,
      covers,
      summarized: fresh.length,
      kept: after.length - 1,
      tokens_after: deps.tokens.session(after),
    };
    deps.log.info(
      { subject: subjectOf(userId, sessionId), reason, summary_id: summaryId, summarized: fresh.length, tokens_before: result.tokens_before, tokens_after: result.tokens_after, summarizer: result.summarizer },
      'session compacted',
    );
    return result;
  }

  /**
   * The session's conversation: the short-term tier's history, or — when it holds nothing (expired,
   * or another process's in-process store) — the turn log's turns not yet covered by the latest
   * summary, after that summary.
   */
  private async conversation(userId: string, sessionId: string): Promise<{ turns: Turn[]; source: CompactionResult['source'] }> {
    const recent = await this.deps.shortTerm.recent(userId, sessionId);
    if (recent.length > 0) return { turns: recent, source: 'short_term' };
    const latest = await this.latestSummary(userId, sessionId);
    const covered = new Set(latest?.covers ?? []);
    const rest = (await this.deps.turnLog.session(userId, sessionId)).filter((t) => !covered.has(t.id));
    return { turns: latest ? [entryToTurn(latest), ...rest] : rest, source: 'turn_log' };
  }

  private async latestSummary(userId: string, sessionId: string): Promise<MemoryEntry | null> {
    // newest first; summaries are few beside the turns, so a bounded look-back finds the latest
    const entries = await this.deps.longTerm.recent(userId, { sessionId, limit: 1000 });
    return entries.find((e) => e.kind === 'summary') ?? null;
  }

  /** the turn ids earlier summaries stand for, as their long-term entries record them */
  private async coversOf(summaries: readonly Turn[]): Promise<string[]> {
    const out: string[] = [];
    for (const s of summaries) {
      const entry = await this.deps.longTerm.get(s.user_id, s.id);
      out.push(...(entry?.covers ?? []));
    }
    return out;
  }

  /** the newest `keepTurns` ordinary turns, fewer while they alone would take over a quarter of the limit */
  private keep(ordinary: readonly Turn[]): Turn[] {
    const kept = ordinary.slice(Math.max(0, ordinary.length - this.deps.keepTurns));
    while (kept.length > 0 && this.deps.tokens.session(kept) > this.deps.limitTokens / 4) kept.shift();
    return kept;
  }

  /**
   * Writes [summary, every turn not covered] as the session's history. The history is re-read just
   * before the write, so turns that arrived while the summarizer ran are kept; `fromLog` adds the
   * pinned and kept turns of a conversation read from the turn log.
   */
  private async replaceHistory(summaryTurn: Turn, covered: Set<string>, fromLog: readonly Turn[]): Promise<Turn[]> {
    const { shortTerm } = this.deps;
    const current = await shortTerm.recent(summaryTurn.user_id, summaryTurn.session_id);
    const left = (t: Turn) => !covered.has(t.id) && !isSummaryTurn(t);
    let rest = current.filter(left);
    if (fromLog.length > 0) {
      const byId = new Map<string, Turn>();
      for (const t of [...fromLog.filter(left), ...rest]) byId.set(t.id, t);
      rest = [...byId.values()].sort((a, b) => a.created_at.localeCompare(b.created_at));
    }
    // a turn deleted while the summary was written must not come back with the new history
    const logged: Turn[] = [];
    for (const t of rest) if ((await this.deps.turnLog.get(t.user_id, t.id)) !== null) logged.push(t);
    const history = [summaryTurn, ...logged];
    await shortTerm.replace(summaryTurn.user_id, summaryTurn.session_id, history);
    return history;
  }
}

function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/**
 * The summary as the head of its session's short-term history. `metadata.kind` repeats the kind for
 * clients that read it there, as they did before turns had a `kind`.
 */
function entryToTurn(e: MemoryEntry): Turn {
  return {
    ...recordOf(e),
    kind: 'summary',
    importance: e.importance,
    pinned: false,
    metadata: { kind: 'summary', covers_count: e.covers?.length ?? 0, summarizer: (e.metadata?.summarizer as string | undefined) ?? null },
  };
}

/** true when at least one of the turns is still in the turn log */
async function anyLogged(turnLog: TurnLog, userId: string, turns: readonly Turn[]): Promise<boolean> {
  for (const t of turns) if ((await turnLog.get(userId, t.id)) !== null) return true;
  return false;
}
