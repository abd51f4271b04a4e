// Generates, from a fixed seed, a multi-session conversation set with labelled questions whose
// evidence turns are known. Takes DatasetOptions; returns an EvalDataset (turns + questions).
import { ACKS_USER, ACTIVITIES, ACTIVITY_REACTIONS, ASKED_FACTS, CLOSINGS_ASSISTANT, CLOSINGS_USER, GREETINGS_ASSISTANT, GREETINGS_USER, PLACES, SMALLTALK_USER, assistantReply } from './content/chatter.js';
import { FACT_SLOTS, GENERIC_ACKS, type FactSlot } from './content/facts.js';
import {
  ASSISTANT_NAMES, CHAIN_FACTS, INTRODUCTIONS, PARTICIPANT_FACTS, PARTICIPANT_GOODBYES, PARTICIPANT_GREETINGS, PEOPLE_DISTRACTORS, PERSON_EVENTS,
  PERSON_MENTIONS, PERSON_NAMES, RELATIONS, USER_NAMES,
} from './content/people.js';
import { Rand } from './random.js';

export const QUESTION_TYPES = ['single_fact', 'distant_fact', 'updated_fact', 'two_turn', 'paraphrase', 'temporal'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** What each type tests, for the report. */
export const QUESTION_TYPE_NOTES: Record<QuestionType, string> = {
  single_fact: 'a fact stated once in a recent session (a third are said by a named participant who joined the chat)',
  distant_fact: 'a fact stated in the first two sessions, ten or more sessions before the question',
  updated_fact: 'a fact stated early and changed later; the newer statement is the answer, the older must rank below it',
  two_turn: "needs two turns: an assistant's question and the user's short answer, or a relation named in one turn and the fact in another",
  paraphrase: 'the question shares no word (stem) with the evidence: only a semantic model can bridge it',
  temporal: 'asks what the user (or a person) did in a given month ("last May", "in March 2024")',
};

export interface EvalTurn {
  id: string;
  user_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  name: string;
  content: string;
  created_at: string;
}

export interface EvalQuestion {
  id: string;
  user_id: string;
  type: QuestionType;
  query: string;
  /** the turns that answer it (all of them count toward recall) */
  evidence: string[];
  /** superseded turns (updated facts): they must rank below the evidence */
  stale: string[];
}

export interface EvalDataset {
  seed: number;
  /** the moment the questions are asked ("last May" is relative to it) */
  now: string;
  users: string[];
  turns: EvalTurn[];
  questions: EvalQuestion[];
}

export interface DatasetOptions {
  seed: number;
  users: number;
  sessions: readonly [number, number];
  turnsPerSession: readonly [number, number];
  minTurnsPerUser: number;
  /** sessions fall between start and now */
  start: string;
  now: string;
}

export const DEFAULT_DATASET: DatasetOptions = {
  seed: 20250620,
  users: 24,
  sessions: [11, 15],
  turnsPerSession: [24, 34],
  minTurnsPerUser: 300,
  start: '2024-04-01T00:00:00.000Z',
  now: '2025-06-20T18:00:00.000Z',
};

interface Line {
  role: 'user' | 'assistant';
  name: string;
  content: string;
  /** a label by which questions find this turn's id */
  ref?: string;
}
type Block = Line[];

interface PlannedQuestion {
  type: QuestionType;
  query: string;
  evidence: string[];
  stale: string[];
}

const DAY = 86_400_000;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export function generateDataset(options: Partial<DatasetOptions> = {}): EvalDataset {
  const o: DatasetOptions = { ...DEFAULT_DATASET, ...options };
  if (o.users > USER_NAMES.length) throw new Error(`at most ${USER_NAMES.length} users`);
  const root = new Rand(o.seed);
  const names = root.sample(USER_NAMES, o.users);
  const turns: EvalTurn[] = [];
  const questions: EvalQuestion[] = [];
  const users: string[] = [];
  names.forEach((name, i) => {
    const userId = `u${String(i + 1).padStart(2, '0')}-${name.toLowerCase()}`;
    users.push(userId);
    const out = generateUser(userId, name, root.fork(), o);
    turns.push(...out.turns);
    questions.push(...out.questions);
  });
  const dataset: EvalDataset = { seed: o.seed, now: o.now, users, turns, questions };
  checkDataset(dataset, o);
  return dataset;
}

function generateUser(userId: string, userName: string, r: Rand, o: DatasetOptions): { turns: EvalTurn[]; questions: EvalQuestion[] } {
  const assistant = r.pick(ASSISTANT_NAMES);
  const nSessions = r.int(o.sessions[0], o.sessions[1]);
  const blocks: Block[][] = Array.from({ length: nSessions }, () => []);
  const u = (content: string, ref?: string): Line => ({ role: 'user', name: userName, content, ...(ref ? { ref } : {}) });
  const a = (content: string, ref?: string): Line => ({ role: 'assistant', name: assistant, content, ...(ref ? { ref } : {}) });
  const at = (lo: number, hi: number) => r.int(Math.max(0, lo), Math.min(nSessions - 1, hi));
  const planned: PlannedQuestion[] = [];

  // --- facts about the user: updated, distant, recent, paraphrased, and some never asked about
  const slots = r.shuffle(FACT_SLOTS);
  const updatable = slots.filter((s) => s.update);
  const updated = updatable.slice(0, 2);
  const rest = slots.filter((s) => !updated.includes(s));
  const distant = rest.slice(0, 3);
  const recent = rest.slice(3, 5);
  const paraphrased = rest.slice(5, 8);
  const unasked = rest.slice(8);
  const ack = (slot: FactSlot) => (r.chance(0.6) ? r.pick(slot.acks) : r.pick(GENERIC_ACKS));

  for (const slot of updated) {
    const [oldValue, newValue] = r.sample(slot.values, 2) as [string, string];
    const olds = slot.statements.map((f) => f(oldValue));
    const news = slot.update!.statements.map((f) => f(newValue, oldValue));
    const { statement: newer, question } = choosePair(r, news, slot.update!.questions, 'overlap', olds);
    const older = r.pick(olds.filter((s) => overlaps(question, s)).length > 0 ? olds.filter((s) => overlaps(question, s)) : olds);
    blocks[at(0, 2)]!.push([u(older, `fact:${slot.key}:old`), a(ack(slot))]);
    blocks[at(nSessions - 4, nSessions - 1)]!.push([u(newer, `fact:${slot.key}`), a(ack(slot))]);
    planned.push({ type: 'updated_fact', query: question, evidence: [`fact:${slot.key}`], stale: [`fact:${slot.key}:old`] });
  }
  const stateFact = (slot: FactSlot, session: number, type: QuestionType | null) => {
    const value = r.pick(slot.values);
    const statements = slot.statements.map((f) => f(value));
    if (type === null) {
      blocks[session]!.push([u(r.pick(statements), `fact:${slot.key}`), a(ack(slot))]);
      return;
    }
    const { statement, question } =
      type === 'paraphrase' ? choosePair(r, statements, slot.paraphrases, 'disjoint') : choosePair(r, statements, slot.questions, 'overlap');
    blocks[session]!.push([u(statement, `fact:${slot.key}`), a(ack(slot))]);
    planned.push({ type, query: question, evidence: [`fact:${slot.key}`], stale: [] });
  };
  for (const slot of distant) stateFact(slot, at(0, 1), 'distant_fact');
  for (const slot of recent) stateFact(slot, at(Math.ceil(nSessions / 2), nSessions - 1), 'single_fact');
  for (const slot of paraphrased) stateFact(slot, at(0, nSessions - 1), 'paraphrase');
  for (const slot of unasked) stateFact(slot, at(0, nSessions - 1), null);
  // topic words without the fact: what makes keyword search pick the wrong turn
  const distract = (lines: readonly string[], n: number) => {
    for (const line of r.sample(lines, Math.min(n, lines.length))) {
      blocks[at(0, nSessions - 1)]!.push([u(line), a(assistantReply((xs) => r.pick(xs), r.chance(0.5)))]);
    }
  };
  for (const slot of slots) distract(slot.distractors, r.int(1, 3));

  // --- people in the user's life
  const people = r.sample(PERSON_NAMES.filter((p) => p !== userName), 4);
  const relations = r.sample(RELATIONS, 4);
  const [chainPerson, , participant, eventPerson] = people as [string, string, string, string];
  const introSessions = people.map(() => at(0, 3));
  people.forEach((p, i) => {
    blocks[introSessions[i]!]!.push([u(r.pick(INTRODUCTIONS)(relations[i]!, p), `intro:${p}`), a(r.pick(GENERIC_ACKS))]);
  });
  {
    const fact = r.pick(CHAIN_FACTS);
    const statement = fact.statement(chainPerson, r.pick(fact.values), relations[0]!);
    blocks[at(introSessions[0]! + 3, nSessions - 1)]!.push([u(statement, `chain:${chainPerson}`), a(r.pick(ACTIVITY_REACTIONS))]);
    planned.push({ type: 'two_turn', query: fact.question(relations[0]!), evidence: [`intro:${chainPerson}`, `chain:${chainPerson}`], stale: [] });
  }
  {
    const fact = r.pick(PARTICIPANT_FACTS);
    const p: Line = { role: 'user', name: participant, content: '' };
    blocks[at(1, nSessions - 1)]!.push([
      { ...p, content: r.pick(PARTICIPANT_GREETINGS)(assistant, participant, userName) },
      a(`Hi ${participant}! Of course, what do you need?`),
      { ...p, content: fact.statement(r.pick(fact.values)), ref: `part:${participant}` },
      a(assistantReply((xs) => r.pick(xs), true)),
      { ...p, content: r.pick(PARTICIPANT_GOODBYES) },
      a(`Bye ${participant}!`),
    ]);
    planned.push({ type: 'single_fact', query: fact.question(participant), evidence: [`part:${participant}`], stale: [] });
  }
  const eventRelation = relations[3]!;
  for (const [k, event] of r.sample(PERSON_EVENTS, 2).entries()) {
    // one event early, one late, so that they fall in different months
    const session = k === 0 ? at(0, Math.floor(nSessions / 2) - 1) : at(Math.floor(nSessions / 2) + 1, nSessions - 1);
    blocks[session]!.push([u(event(eventPerson, eventRelation), `pevent:${eventPerson}`), a(r.pick(ACTIVITY_REACTIONS))]);
  }
  distract(PEOPLE_DISTRACTORS, r.int(2, 4));
  for (let i = r.int(4, 7); i > 0; i--) {
    blocks[at(0, nSessions - 1)]!.push([u(r.pick(PERSON_MENTIONS)(r.pick(people))), a(r.pick(ACTIVITY_REACTIONS))]);
  }

  // --- the assistant asks, the user answers in a few words
  const asked = r.sample(ASKED_FACTS, 3);
  asked.forEach((fact, i) => {
    blocks[at(0, nSessions - 1)]!.push([
      u(r.pick(['ok, next thing on my list', 'can you help me get organised this week?', 'one more admin thing', 'let us sort out some errands'])),
      a(fact.ask, `ask:${fact.key}:q`),
      u(r.pick(fact.answers)(r.pick(fact.values)), `ask:${fact.key}:a`),
      a(r.pick(GENERIC_ACKS)),
    ]);
    distract(fact.distractors, r.int(1, 2));
    if (i < 2) planned.push({ type: 'two_turn', query: r.pick(fact.questions), evidence: [`ask:${fact.key}:q`, `ask:${fact.key}:a`], stale: [] });
  });

  // --- a weekend report in every session (time questions ask about these)
  const activities = r.sample(ACTIVITIES, nSessions);
  const places = r.shuffle(PLACES);
  activities.forEach((act, s) => {
    blocks[s]!.push([u(act.replace('{place}', places[s % places.length]!), 'act'), a(r.pick(ACTIVITY_REACTIONS))]);
  });

  // --- assemble sessions: greeting, the blocks in random order among small talk, goodbye
  const sessionStarts = spreadSessions(r, nSessions, Date.parse(o.start), Date.parse(o.now) - DAY);
  const turns: EvalTurn[] = [];
  const refs = new Map<string, string[]>();
  const targets = blocks.map(() => r.int(o.turnsPerSession[0], o.turnsPerSession[1]));
  const total = () => targets.reduce((x, y) => x + y, 0);
  while (total() < o.minTurnsPerUser) targets[r.int(0, nSessions - 1)]! += 2;
  blocks.forEach((own, s) => {
    const sessionId = `${userId}-s${String(s + 1).padStart(2, '0')}`;
    const middle = [...own];
    let count = 4 + middle.reduce((n, b) => n + b.length, 0);
    while (count < targets[s]!) {
      const filler = smallTalk(r, u, a);
      middle.push(filler);
      count += filler.length;
    }
    const lines: Line[] = [
      u(r.pick(GREETINGS_USER)(assistant)),
      a(r.pick(GREETINGS_ASSISTANT)(userName)),
      ...r.shuffle(middle).flat(),
      u(r.pick(CLOSINGS_USER)),
      a(r.pick(CLOSINGS_ASSISTANT)),
    ];
    let t = sessionStarts[s]!;
    lines.forEach((line, i) => {
      const id = `${sessionId}-t${String(i + 1).padStart(3, '0')}`;
      turns.push({ id, user_id: userId, session_id: sessionId, role: line.role, name: line.name, content: line.content, created_at: new Date(t).toISOString() });
      if (line.ref) refs.set(line.ref, [...(refs.get(line.ref) ?? []), id]);
      t += r.int(20, 200) * 1000;
    });
  });

  const byId = new Map(turns.map((t) => [t.id, t]));
  const resolve = (ref: string): string[] => {
    const ids = refs.get(ref);
    if (!ids || ids.length !== 1) throw new Error(`${userId}: reference ${ref} resolves to ${ids?.length ?? 0} turns`);
    return ids;
  };
  const all: PlannedQuestion[] = planned.map((q) => ({ ...q, evidence: q.evidence.flatMap(resolve), stale: q.stale.flatMap(resolve) }));

  // --- time questions, from the timestamps the turns actually carry
  const now = new Date(o.now);
  const byMonth = (ids: readonly string[]) => {
    const m = new Map<string, string[]>();
    for (const id of ids) {
      const key = byId.get(id)!.created_at.slice(0, 7);
      m.set(key, [...(m.get(key) ?? []), id]);
    }
    return m;
  };
  const activityMonths = byMonth(refs.get('act') ?? []);
  for (const month of r.sample([...activityMonths.keys()], 2)) {
    const when = timePhrase(r, month, now);
    const template = r.pick(['What did I do {when}?', 'Remind me what I got up to {when}.', 'What was I up to {when}?', 'Anything memorable I did {when}?', 'How did I spend my free time {when}?']);
    all.push({ type: 'temporal', query: template.replace('{when}', when), evidence: activityMonths.get(month)!, stale: [] });
  }
  const eventMonths = byMonth(refs.get(`pevent:${eventPerson}`) ?? []);
  {
    const month = r.pick([...eventMonths.keys()]);
    const template = r.pick(['What did {p} do {when}?', 'What was {p} up to {when}?', 'What happened with {p} {when}?']);
    all.push({ type: 'temporal', query: template.replace('{p}', eventPerson).replace('{when}', timePhrase(r, month, now)), evidence: eventMonths.get(month)!, stale: [] });
  }

  const questions = all.map((q, i) => ({ id: `${userId}-q${String(i + 1).padStart(2, '0')}`, user_id: userId, ...q }));
  for (const q of questions) checkQuestion(q, byId);
  return { turns, questions };
}

/** A block of small talk: a request and a reply, sometimes a thank-you or a bare acknowledgement. */
function smallTalk(r: Rand, u: (c: string) => Line, a: (c: string) => Line): Block {
  if (r.chance(0.15)) return [u(r.pick(ACKS_USER)), a(r.pick(['😄', 'Ha!', 'Glad to hear it.', 'Any time.']))];
  const block: Block = [u(r.pick(SMALLTALK_USER)), a(assistantReply((xs) => r.pick(xs), r.chance(0.6)))];
  if (r.chance(0.35)) block.push(u(r.pick(ACKS_USER)));
  return block;
}

/** Session start times spread over [from, to]: one per equal slice, at a random day and hour inside it. */
function spreadSessions(r: Rand, n: number, from: number, to: number): number[] {
  const slice = (to - from) / n;
  return Array.from({ length: n }, (_, i) => {
    const day = Math.floor((from + i * slice + r.next() * (slice - DAY)) / DAY) * DAY;
    return day + r.int(7, 21) * 3_600_000 + r.int(0, 59) * 60_000;
  });
}

/** How a person would name month `YYYY-MM` when asking at `now`. */
export function timePhrase(r: Rand, month: string, now: Date): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const ago = now.getUTCFullYear() * 12 + now.getUTCMonth() - (y * 12 + m - 1);
  const name = MONTHS[m - 1]!;
  if (ago <= 0) return r.pick(['earlier this month', 'this month']);
  if (ago === 1) return r.pick(['last month', `in ${name}`, `last ${name}`]);
  if (ago < 12) return r.pick([`last ${name}`, `in ${name}`, `back in ${name}`, `during ${name}`]);
  return r.pick([`in ${name} ${y}`, `back in ${name} ${y}`, `during ${name} ${y}`]);
}

// ---- lexical checks: the labels must mean what the question types say

const FUNCTION_WORDS = new Set(
  `a an the i me my mine we our us you your he she it its they them their his her of to in on at for from by with about as into
  over under and or but so if then than that this these those is am are was were be been being do does did doing have has had
  having what which who whom whose when where why how can could would should will shall may might must not no yes any some all
  there here it's i'm i've i'd i'll don't didn't up out just now these days really very get got one`.split(/\s+/),
);

function stemKey(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '');
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  for (const suffix of ['ing', 'ed', 'es', 's', 'ly', 'er', 'e']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w.slice(0, 5);
}

/** The content-word stems of a text (function words dropped), conservatively merged by prefix. */
export function contentStems(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? []) {
    if (FUNCTION_WORDS.has(w) || w.length < 2) continue;
    out.add(stemKey(w));
  }
  return out;
}

export function overlaps(a: string, b: string): boolean {
  const sb = contentStems(b);
  for (const s of contentStems(a)) if (sb.has(s)) return true;
  return false;
}

/** A (statement, question) pair that shares a word ('overlap') or shares none ('disjoint'). */
function choosePair(r: Rand, statements: readonly string[], questions: readonly string[], want: 'overlap' | 'disjoint', preferAlsoWith: readonly string[] = []) {
  const pairs = r.shuffle(statements.flatMap((statement) => questions.map((question) => ({ statement, question }))));
  const ok = pairs.filter((p) => overlaps(p.question, p.statement) === (want === 'overlap'));
  if (ok.length === 0) throw new Error(`no ${want} pair among: ${questions.join(' | ')}`);
  return ok.find((p) => preferAlsoWith.some((s) => overlaps(p.question, s))) ?? ok[0]!;
}

function checkQuestion(q: EvalQuestion, byId: Map<string, EvalTurn>): void {
  const evidence = q.evidence.map((id) => byId.get(id));
  if (evidence.length === 0 || evidence.some((t) => !t)) throw new Error(`${q.id}: evidence missing`);
  const text = evidence.map((t) => `${t!.content} ${t!.role === 'user' ? t!.name : ''}`).join(' ');
  if (q.type === 'paraphrase' && overlaps(q.query, text)) throw new Error(`${q.id}: paraphrase shares a word with its evidence`);
  if (q.type !== 'paraphrase' && q.type !== 'temporal' && !overlaps(q.query, text)) throw new Error(`${q.id}: no word in common with its evidence`);
}

function checkDataset(d: EvalDataset, o: DatasetOptions): void {
  const perUser = new Map<string, { turns: number; sessions: Set<string> }>();
  for (const t of d.turns) {
    const s = perUser.get(t.user_id) ?? { turns: 0, sessions: new Set<string>() };
    s.turns++;
    s.sessions.add(t.session_id);
    perUser.set(t.user_id, s);
  }
  for (const [user, s] of perUser) {
    if (s.turns < o.minTurnsPerUser || s.sessions.size < o.sessions[0]) throw new Error(`${user}: ${s.turns} turns in ${s.sessions.size} sessions`);
  }
  if (new Set(d.turns.map((t) => t.id)).size !== d.turns.length) throw new Error('duplicate turn ids');
}

/** For the report: how big the set is. */
export function describeDataset(d: EvalDataset) {
  const sessions = new Set(d.turns.map((t) => t.session_id)).size;
  const names = new Set(d.turns.map((t) => `${t.user_id}/${t.name}`)).size;
  const byType = Object.fromEntries(QUESTION_TYPES.map((t) => [t, d.questions.filter((q) => q.type === t).length])) as Record<QuestionType, number>;
  const times = d.turns.map((t) => t.created_at).sort();
  return {
    seed: d.seed,
    users: d.users.length,
    sessions,
    turns: d.turns.length,
    participants: names,
    questions: d.questions.length,
    questions_by_type: byType,
    first_turn: times[0] ?? null,
    last_turn: times[times.length - 1] ?? null,
    asked_at: d.now,
  };
}
