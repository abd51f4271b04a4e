// Reads RealMem personas (RealMemBench, `dataset/*_dialogues_256k.json`: one JSON object per persona)
// into turns for the write path and labelled query turns. The data is never part of this repository:
// the folder is read from wherever the user keeps it. `extracted_memory` is never read: a memory
// service does not get it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { MAX_QUERY_CHARS } from '../../src/retrieval/request.js';

const TurnSchema = z.looseObject({
  speaker: z.string(),
  content: z.string(),
  is_query: z.boolean().optional(),
  query_id: z.string().nullable().optional(),
  category_name: z.string().optional(),
  memory_session_uuids: z.array(z.string()).optional(),
});
const SessionSchema = z.looseObject({ session_uuid: z.string(), current_time: z.string(), dialogue_turns: z.array(TurnSchema) });
const FileSchema = z.looseObject({ _metadata: z.looseObject({ person_name: z.string().optional() }).optional(), dialogues: z.array(SessionSchema).min(1) });

export interface RealmemTurn {
  id: string;
  user_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  name: null;
  content: string;
  created_at: string;
}

export interface RealmemQuestion {
  id: string;
  user_id: string;
  persona: string;
  category: string;
  query: string;
  /** only sessions that started before the query's own count */
  created_before: string;
  /** session ids (the turns' session_id) the answer needs */
  gold: string[];
}

export interface RealmemRepairs {
  /** turns whose control characters (a U+0002 pasted from a PDF) were taken out, as a client must */
  controlCharsRemoved: number;
  /** queries cut to the retrieve request's limit */
  queriesCut: number;
  /** labelled sessions that are not earlier sessions of the same persona (dropped) */
  goldDropped: number;
  /** query turns with no labelled earlier session (not scored) */
  questionsWithoutGold: number;
}

export interface RealmemDataset {
  personas: Array<{ persona: string; user_id: string; sessions: number; turns: number }>;
  turns: RealmemTurn[];
  questions: RealmemQuestion[];
  /** characters of the longest turn (the run raises max_turn_chars to hold it) */
  longestTurn: number;
  repairs: RealmemRepairs;
}

const MINUTE = 60_000;
const SECOND = 1_000;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/** "2025-12-15 (Monday)" → that day's midnight UTC (the data gives a date, no time) */
export function parseRealmemDate(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(s.trim());
  if (!m) throw new Error(`unreadable session date "${s}" (expected e.g. "2025-12-15 (Monday)")`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

/**
 * Every `*_dialogues_*.json` of the folder, one user each. Session i of a persona (list order) starts
 * at its date plus i minutes, so list order is time order even within a day; its turn j is j seconds
 * later (a session holds far fewer than 60 turns).
 */
export function readRealmem(dir: string): RealmemDataset {
  const files = readdirSync(dir)
    .filter((f) => /_dialogues_.*\.json$/.test(f))
    .sort();
  if (files.length === 0) throw new Error(`${dir}: no RealMem persona files (*_dialogues_*.json)`);
  const out: RealmemDataset = { personas: [], turns: [], questions: [], longestTurn: 0, repairs: { controlCharsRemoved: 0, queriesCut: 0, goldDropped: 0, questionsWithoutGold: 0 } };
  for (const file of files) {
    const path = join(dir, file);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`${path}: not a readable JSON file (${(err as Error).message})`);
    }
    const data = FileSchema.safeParse(parsed);
    if (!data.success) throw new Error(`${path}: not in RealMem's format: ${data.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const persona = data.data._metadata?.person_name ?? file.replace(/_dialogues_.*$/, '');
    const user = `realmem-${persona}`;
    const sessionOf = new Map<string, { id: string; index: number }>();
    let turns = 0;
    data.data.dialogues.forEach((s, index) => {
      const start = parseRealmemDate(s.current_time) + index * MINUTE;
      const sessionId = `${persona}:s${index}`;
      sessionOf.set(s.session_uuid, { id: sessionId, index });
      s.dialogue_turns.forEach((t, j) => {
        const cleaned = t.content.replace(CONTROL, '');
        if (cleaned !== t.content) out.repairs.controlCharsRemoved++;
        if (cleaned.trim() === '') return;
        turns++;
        out.longestTurn = Math.max(out.longestTurn, cleaned.length);
        out.turns.push({
          id: `${persona}:s${index}:t${j}`,
          user_id: user,
          session_id: sessionId,
          role: t.speaker.toLowerCase() === 'assistant' ? 'assistant' : 'user',
          name: null,
          content: cleaned,
          created_at: new Date(start + j * SECOND).toISOString(),
        });
        if (!t.is_query) return;
        const labels = s.dialogue_turns[j + 1]?.memory_session_uuids ?? t.memory_session_uuids ?? [];
        const gold = new Set<string>();
        for (const uuid of labels) {
          const g = sessionOf.get(uuid);
          // the map holds this session and the earlier ones: a label naming this one is not earlier
          if (g && g.index < index) gold.add(g.id);
          else out.repairs.goldDropped++;
        }
        if (gold.size === 0) {
          out.repairs.questionsWithoutGold++;
          return;
        }
        let query = cleaned.trim();
        if (query.length > MAX_QUERY_CHARS) {
          query = query.slice(0, MAX_QUERY_CHARS);
          out.repairs.queriesCut++;
        }
        out.questions.push({
          id: `${persona}:s${index}:t${j}:${t.query_id ?? 'q'}`,
          user_id: user,
          persona,
          category: t.category_name ?? 'unlabelled',
          query,
          created_before: new Date(start).toISOString(),
          gold: [...gold],
        });
      });
    });
    out.personas.push({ persona, user_id: user, sessions: data.data.dialogues.length, turns });
  }
  return out;
}
