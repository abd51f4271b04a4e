import { z } from 'zod';
import { actingUser, ownedEntry } from '../api/access.js';
import type { Principal } from '../api/auth.js';
import type { ApiServices } from '../api/context.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type ApiSchemas } from '../api/schemas.js';
import type { MemoryEntry, RetrievalResult } from '../domain/entry.js';
import { MAX_TURNS_PER_WRITE, SessionIdSchema, StoredIdSchema, UserIdSchema } from '../domain/turn.js';
import { completedErasure, type ErasureReport } from '../memory/forget.js';
import type { Memory } from '../memory/memory.js';
import { parseOrThrow } from '../validate.js';

/** What a tool call acts with: the services and the principal of the connection (stdio) or request (HTTP). */
export interface ToolContext {
  memory: Memory;
  services: Pick<ApiServices, 'writePath' | 'shortTerm'>;
  principal: Principal;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** the HTTP response schema the structured result follows, when the HTTP API has one */
  output?: z.ZodObject;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  /** `signal`: the call was cancelled or its connection closed (a retrieve then stops; see RetrieveOptions) */
  run(args: unknown, ctx: ToolContext, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** the result as text an LLM reads */
  text(result: Record<string, unknown>): string;
}

/** Keeps each tool's argument and result types checked while the list holds them all alike. */
function tool<I extends z.ZodObject, R extends object>(def: {
  name: string;
  title: string;
  description: string;
  input: I;
  output?: z.ZodObject;
  kind: 'read' | 'write' | 'destructive';
  run(args: z.output<I>, ctx: ToolContext, signal?: AbortSignal): Promise<R>;
  text(result: R): string;
}): ToolDef {
  const { kind, ...rest } = def;
  return {
    ...rest,
    annotations: { readOnlyHint: kind === 'read', destructiveHint: kind === 'destructive', idempotentHint: kind !== 'write' },
    run: def.run as ToolDef['run'],
    text: def.text as ToolDef['text'],
  } as ToolDef;
}

const USER = UserIdSchema.optional().describe('whose memories; leave it out to act for the only user your key is bound to (else "default")');
const SESSION_ID = SessionIdSchema.describe('the conversation: any stable id your client keeps per chat');

const quote = (s: string, max = 300): string => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);
const speaker = (m: { role: string; name: string | null }): string => (m.name ? `${m.role} ${m.name}` : m.role);

function entryLine(e: MemoryEntry): string {
  return `- ${e.id} · ${speaker(e)} · ${e.created_at}${e.pinned ? ' · pinned' : ''} · importance ${e.importance.toFixed(2)} · session ${e.session_id}: ${quote(e.content)}`;
}

function resultLine(r: RetrievalResult, i: number): string {
  return `${i + 1}. ${r.id} · score ${r.score.toFixed(3)} · ${r.tier} · ${speaker(r)} · ${r.created_at}: ${quote(r.content)}`;
}

function erasureText(r: ErasureReport): string {
  const entries = Object.values(r.long_term).reduce((a, b) => a + b, 0);
  const scope = 'user_id' in r.scope ? `session ${r.scope.session_id ?? ''} of user ${r.scope.user_id}` : 'everything';
  return `Erased ${scope}: ${entries} long-term entries, ${r.turn_log} logged turns, ${r.short_term} short-term sessions, ${r.vectors} vectors, ${r.jobs} jobs.`;
}

/**
 * The MCP tools: thin over the same schemas (src/api/schemas.ts), access rules (src/api/access.ts) and
 * services as the HTTP routes, so an argument the HTTP API would refuse is refused here with the same
 * error code, and no argument reaches a user the principal may not touch.
 */
export function mcpTools(s: ApiSchemas): ToolDef[] {
  return [
    tool({
      name: 'add_turns',
      title: 'Remember conversation turns',
      description:
        "Store one or more turns of a conversation in memory: the session's recent history at once, then (in the background, " +
        'within a second or so) the semantic index and the long-term store, where `retrieve` finds them from any later session. ' +
        "Call it after each exchange worth remembering, with the user's message and your reply as two turns in order. Give each turn " +
        'a stable `id` when you might send it again: a turn whose id is already stored counts as a duplicate and is stored once. ' +
        'Returns the id of every turn, in order.',
      input: z.strictObject({
        session_id: SESSION_ID,
        user_id: USER,
        turns: z
          .array(s.TurnInSession.omit({ session_id: true, user_id: true }))
          .min(1)
          .max(MAX_TURNS_PER_WRITE)
          .describe('the turns, oldest first: {role, content, name?, id?, created_at?, importance?, pinned?, metadata?}'),
      }),
      output: s.AddTurnsResponse,
      kind: 'write',
      async run(args, ctx) {
        const user_id = actingUser(ctx.principal, args.user_id);
        const turns = args.turns.map((t) => ({ ...t, session_id: args.session_id, user_id }));
        return ctx.services.writePath.addTurns(turns, 'turns');
      },
      text: (r) =>
        `Stored ${r.accepted} turn(s)${r.duplicates > 0 ? `; ${r.duplicates} were already stored (kept once)` : ''}. Ids, in order: ${r.ids.join(', ')}.`,
    }),

    tool({
      name: 'retrieve',
      title: 'Recall memories',
      description:
        "Recall what is remembered that bears on a question or topic, in one pass over the session's recent turns, the semantic " +
        'index and the long-term store. Call it before answering anything that may depend on earlier conversations: facts about ' +
        'the user, preferences, plans, earlier decisions, "what did I say about…". Pass the current `session_id` so its recent turns ' +
        'count. A period in the query ("last May", "two weeks ago") restricts to memories of that time. Returns `prompt_blocks` ' +
        '(text to put in your context as is) and `results`, each with its id (for get_memory, update_memory, delete_memory), score ' +
        'and `explain` (why it ranked there).',
      input: s.RetrieveBody.extend({ user_id: USER }),
      output: s.RetrieveResponse,
      kind: 'read',
      async run(args, ctx, signal) {
        return ctx.memory.retrieve({ ...args, user_id: actingUser(ctx.principal, args.user_id) }, signal ? { signal } : {});
      },
      text: (r) =>
        r.results.length === 0
          ? 'Nothing remembered matches this query.'
          : `${r.prompt_blocks}\n\nResults (id · score · tier · speaker · time):\n${r.results.map(resultLine).join('\n')}`,
    }),

    tool({
      name: 'search_memory',
      title: 'Search long-term memory text',
      description:
        'Find long-term memories whose text or speaker name contains a substring, exactly (names, numbers, rare words); newest ' +
        'first. For questions use `retrieve`, which ranks by meaning; use this to find every memory mentioning something, or the ' +
        'id of a memory to update or delete.',
      input: z.strictObject({
        query: s.SearchQuery.shape.q,
        user_id: USER,
        session_id: SessionIdSchema.optional().describe('only this session'),
        limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe(`how many, 1–${MAX_LIMIT}`),
      }),
      output: s.EntriesResponse,
      kind: 'read',
      async run(args, ctx) {
        const user_id = actingUser(ctx.principal, args.user_id);
        const entries = await ctx.memory.search(args.query, { user_id, limit: args.limit, ...(args.session_id ? { session_id: args.session_id } : {}) });
        return { entries };
      },
      text: (r) => (r.entries.length === 0 ? 'No long-term memory contains this text.' : `${r.entries.length} memories, newest first:\n${r.entries.map(entryLine).join('\n')}`),
    }),

    tool({
      name: 'get_memory',
      title: 'Read one memory',
      description: 'Read one memory by its id (from retrieve or search_memory): full text, speaker, session, importance, pinned state, times.',
      input: z.strictObject({ id: StoredIdSchema.describe('the memory id'), user_id: USER }),
      output: s.EntryResponse,
      kind: 'read',
      run: (args, ctx) => ownedEntry(ctx.memory, ctx.principal, args.user_id, args.id),
      text: (e) => `${entryLine(e)}\n\n${e.content}`,
    }),

    tool({
      name: 'update_memory',
      title: 'Correct or pin a memory',
      description:
        'Change a long-term memory: replace its text (it is re-embedded), set its importance (0 to 1), or pin it so pruning and ' +
        'archival never remove it. Use it when the user corrects a remembered fact or asks you to always remember something. Give ' +
        'the id and at least one of content, importance, pinned.',
      input: z.strictObject({ id: StoredIdSchema.describe('the memory id'), user_id: USER, ...s.PatchBody.shape }),
      output: s.EntryResponse,
      kind: 'write',
      async run({ id, user_id, ...rest }, ctx) {
        const user = actingUser(ctx.principal, user_id);
        const patch = parseOrThrow(s.PatchBody, rest, 'update');
        return ctx.memory.edit(user, id, patch);
      },
      text: (e) => `Updated:\n${entryLine(e)}`,
    }),

    tool({
      name: 'delete_memory',
      title: 'Delete one memory',
      description:
        'Delete one memory, by id, from every tier that holds it (long-term store, semantic index, session history, turn log). ' +
        'Use it when the user asks you to forget one specific thing. It cannot be undone.',
      input: z.strictObject({ id: StoredIdSchema.describe('the memory id'), user_id: USER }),
      output: s.DeleteResponse,
      kind: 'destructive',
      async run({ id, user_id }, ctx) {
        return ctx.memory.delete(actingUser(ctx.principal, user_id), id);
      },
      text: (r) => {
        const where = Object.entries(r.removed).filter(([, held]) => held).map(([tier]) => tier);
        return `Deleted memory ${r.id} from ${where.length > 0 ? where.join(', ') : 'no tier (it was still being written)'}.`;
      },
    }),

    tool({
      name: 'forget_session',
      title: 'Erase a whole session (destructive)',
      description:
        'DESTRUCTIVE AND IRREVERSIBLE: erase an entire session, every turn, summary and vector of it, pinned memories included, ' +
        'from every tier. Only call it when the user has explicitly asked to forget a whole conversation, and pass `confirm: true` ' +
        'to state that they did. To forget one thing, use delete_memory instead.',
      input: z.strictObject({
        session_id: SESSION_ID,
        user_id: USER,
        confirm: z.literal(true).describe('must be true: the user explicitly asked to erase this session'),
      }),
      kind: 'destructive',
      run: async (args, ctx) => {
        const user = actingUser(ctx.principal, args.user_id);
        // nothing stored is not_found and a partial erasure erasure_incomplete, as DELETE /users/:user_id/sessions/:session_id answers
        return completedErasure(await ctx.memory.clearSession(user, args.session_id), `session "${args.session_id}" of user "${user}"`);
      },
      text: erasureText,
    }),
  ];
}
