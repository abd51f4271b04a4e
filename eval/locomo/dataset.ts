// Reads a file in LoCoMo's own format (Maharana et al., ACL 2024: `locomo10.json` or any subset of it)
// into turns for the write path and labelled questions. The data is never part of this repository:
// the file is read from wherever the user keeps it.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

export const CATEGORIES = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' } as const;
export type Category = keyof typeof CATEGORIES;
/** category 5 (adversarial) questions have no answer in the conversation: nothing to recall */
const SCORED = new Set<number>([1, 2, 3, 4]);

const TurnSchema = z.looseObject({ speaker: z.string(), dia_id: z.string(), text: z.string(), blip_caption: z.string().optional() });
const QaSchema = z.looseObject({ question: z.string(), category: z.number().int(), evidence: z.array(z.string()).optional() });
const SampleSchema = z.looseObject({
  sample_id: z.string(),
  conversation: z.looseObject({ speaker_a: z.string(), speaker_b: z.string() }).catchall(z.unknown()),
  qa: z.array(QaSchema),
});
const FileSchema = z.array(SampleSchema).min(1);

export interface LocomoTurn {
  id: string;
  user_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  name: string;
  content: string;
  created_at: string;
}

export interface LocomoQuestion {
  id: string;
  user_id: string;
  category: Category;
  query: string;
  /** turn ids (`<sample>:D<session>:<turn>`) */
  evidence: string[];
}

export interface EvidenceRepairs {
  /** evidence strings read after normalising ("D8:6; D9:17" → two ids, "D:11:26" → D11:26, "D30:05" → D30:5) */
  normalised: string[];
  /** evidence strings dropped: not a turn id, or the id of a turn that does not exist */
  dropped: string[];
  /** scored-category questions left with no evidence at all (not scored) */
  questionsWithoutEvidence: number;
}

export interface LocomoDataset {
  conversations: Array<{ sample_id: string; user_id: string; speakers: [string, string]; sessions: number; turns: number; now: string }>;
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
  repairs: EvidenceRepairs;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" (no time zone in the data: read as UTC) */
export function parseSessionDate(s: string): Date {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$/i.exec(s);
  const month = m ? MONTHS.indexOf(m[5]!.toLowerCase()) : -1;
  if (!m || month < 0) throw new Error(`unreadable session date "${s}" (expected e.g. "1:56 pm on 8 May, 2023")`);
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

/** The turn ids one evidence string names, normalised; null when it names none. */
export function evidenceIds(raw: string): string[] | null {
  const ids: string[] = [];
  for (const part of raw.split(/[;,\s]+/).filter(Boolean)) {
    const m = /^D:?(\d+):0*(\d+)$/.exec(part.trim());
    if (!m) return null;
    ids.push(`D${Number(m[1])}:${Number(m[2])}`);
  }
  return ids.length > 0 ? ids : null;
}

/** Seconds between consecutive turns of a session (the data gives one time per session). */
const TURN_SPACING_MS = 30_000;

/**
 * Who is sent as what: `both-user` (both speakers as role `user`, told apart by name) or `b-assistant`
 * (speaker_b as role `assistant`, as a chat assistant's conversation would be stored). The same words
 * either way: a retrieval that does not let the role decide relevance scores both alike.
 */
export const ROLE_CONVENTIONS = ['both-user', 'b-assistant'] as const;
export type RoleConvention = (typeof ROLE_CONVENTIONS)[number];

export function readLocomo(path: string, o: { captions?: boolean; roles?: RoleConvention } = {}): LocomoDataset {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: not a readable JSON file (${(err as Error).message})`);
  }
  const file = FileSchema.safeParse(parsed);
  if (!file.success) throw new Error(`${path}: not in LoCoMo's format: ${file.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const out: LocomoDataset = { conversations: [], turns: [], questions: [], repairs: { normalised: [], dropped: [], questionsWithoutEvidence: 0 } };
  for (const sample of file.data) {
    const user = `locomo-${sample.sample_id}`;
    const conv = sample.conversation;
    const known = new Set<string>();
    let sessions = 0;
    let last = 0;
    const numbers = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    for (const n of numbers) {
      const turns = z.array(TurnSchema).parse(conv[`session_${n}`]);
      const date = conv[`session_${n}_date_time`];
      if (typeof date !== 'string') throw new Error(`${path}: ${sample.sample_id} session_${n} has no session_${n}_date_time`);
      const start = parseSessionDate(date).getTime();
      sessions++;
      turns.forEach((t, i) => {
        const content = o.captions !== false && t.blip_caption ? `${t.text} [shares a photo: ${t.blip_caption}]` : t.text;
        if (content.trim() === '') return;
        known.add(t.dia_id);
        last = Math.max(last, start + i * TURN_SPACING_MS);
        out.turns.push({
          id: `${sample.sample_id}:${t.dia_id}`,
          user_id: user,
          session_id: `${sample.sample_id}:session-${n}`,
          role: o.roles === 'b-assistant' && t.speaker === conv.speaker_b ? 'assistant' : 'user',
          name: t.speaker,
          content,
          created_at: new Date(start + i * TURN_SPACING_MS).toISOString(),
        });
      });
    }
    sample.qa.forEach((qa, i) => {
      if (!SCORED.has(qa.category)) return;
      const evidence = new Set<string>();
      for (const raw of qa.evidence ?? []) {
        const ids = evidenceIds(raw);
        if (!ids) {
          out.repairs.dropped.push(`${sample.sample_id}: "${raw}"`);
          continue;
        }
        if (ids.length !== 1 || ids[0] !== raw) out.repairs.normalised.push(`${sample.sample_id}: "${raw}" → ${ids.join(', ')}`);
        for (const id of ids) {
          if (known.has(id)) evidence.add(`${sample.sample_id}:${id}`);
          else out.repairs.dropped.push(`${sample.sample_id}: "${id}" (no such turn)`);
        }
      }
      if (evidence.size === 0) {
        out.repairs.questionsWithoutEvidence++;
        return;
      }
      out.questions.push({ id: `${sample.sample_id}:q${i}`, user_id: user, category: qa.category as Category, query: qa.question, evidence: [...evidence] });
    });
    const speakers: [string, string] = [conv.speaker_a, conv.speaker_b];
    out.conversations.push({ sample_id: sample.sample_id, user_id: user, speakers, sessions, turns: known.size, now: new Date(last + 86_400_000).toISOString() });
  }
  return out;
}
