import type { Turn } from '../../domain/turn.js';
import { room } from '../../pace.js';
import type { TokenCounter } from '../tokens.js';
import { SUMMARY_HEADING, isSummaryTurn, speaker, type Summarizer, type SummaryInput, type SummaryOutput } from './summarizer.js';

/**
 * The extractive summarizer: no network, no model, deterministic. It keeps the conversation's most
 * informative sentences verbatim, in their original order, under the token cap, one bullet each
 * ("- user: …").
 *
 * Scoring (per sentence; a "document" is one turn, a "term" a lower-cased word that is not a stopword):
 *   lexical = Σ over the sentence's distinct terms of (1 + ln cf) × ln(1 + N / df) / √(distinct terms)
 *     cf = the term's count in the whole conversation, df = turns holding it, N = turns — TF-IDF over
 *     turns: a topic the conversation returns to weighs more, a word every turn uses weighs less, and
 *     the square root favours dense sentences without letting long ones win by length alone.
 *   score = lexical × (1 + bonuses) × penalties, with
 *     +0.5 a number, amount or date          +0.4 a proper name (capitalized word not opening the sentence)
 *     +0.6 a first-person fact by the user ("I live…", "my…", "I prefer…", "call me…")
 *     +0.3 a decision or commitment ("decided", "agreed", "deadline", "will", "remember")
 *     +0.5 a line of an earlier summary (it was chosen once already)
 *     ×0.5 fewer than three terms          ×0 a short greeting, thanks or acknowledgement (under six words)
 * Selection: best score first, skipping near-duplicates (≥ 60% shared terms) and sentences that no
 * longer fit; sentences scoring 0 are only used when nothing else was found. Sentences longer than
 * 60 words are cut, so one runaway turn cannot take the whole budget.
 */
export class ExtractiveSummarizer implements Summarizer {
  readonly id = 'extractive';

  constructor(private readonly tokens: TokenCounter) {}

  /**
   * Works in the process's slices (src/pace.ts): the archival run summarizes every idle session with
   * it, and one of 39 real turns (51,000 characters) took 63 ms in one stretch.
   */
  async summarize({ turns, maxTokens }: SummaryInput): Promise<SummaryOutput> {
    const units: Unit[] = [];
    const docs = turns.length || 1;
    const cf = new Map<string, number>();
    const df = new Map<string, number>();
    for (const t of turns) {
      // a turn's sentences a share of a slice at a time: one turn of 32,000 characters was 10–20 ms of
      // one turn of the event loop, over the slice
      for (const u of sentencesOf(t, units.length)) {
        units.push(u);
        if (units.length % UNITS_PER_STEP === 0) await room();
      }
      const seen = new Set<string>();
      for (const term of terms(t.content)) {
        cf.set(term, (cf.get(term) ?? 0) + 1);
        if (!seen.has(term)) (seen.add(term), df.set(term, (df.get(term) ?? 0) + 1));
      }
      await room();
    }
    const weight = (term: string) => (1 + Math.log(cf.get(term) ?? 1)) * Math.log(1 + docs / (df.get(term) ?? 1));
    for (const [i, u] of units.entries()) {
      u.score = score(u, weight);
      if (i % UNITS_PER_STEP === UNITS_PER_STEP - 1) await room();
    }

    const ranked = [...units].sort((a, b) => b.score - a.score || a.order - b.order);
    let budget = maxTokens;
    const picked: Unit[] = [];
    for (const u of ranked) {
      if (u.score === 0 && picked.length > 0) break;
      // no line costs less than its bullet, its speaker and the newline
      if (budget < MIN_LINE_TOKENS) break;
      const cost = this.tokens.count(u.line) + 1; // + the newline
      await room();
      if (cost > budget) continue;
      if (picked.some((p) => overlap(p.terms, u.terms) >= 0.6)) continue;
      picked.push(u);
      budget -= cost;
    }
    picked.sort((a, b) => a.order - b.order);
    return { text: picked.length === 0 ? '- (nothing of note)' : picked.map((p) => p.line).join('\n'), by: this.id };
  }
}

interface Unit {
  /** position in the conversation: turn, then sentence */
  order: number;
  line: string;
  text: string;
  terms: Set<string>;
  role: Turn['role'];
  fromSummary: boolean;
  score: number;
}

const MAX_SENTENCE_WORDS = 60;
/** sentences cut, or scored, between two calls of room() (src/pace.ts): a few ms of work */
const UNITS_PER_STEP = 64;
/** "- x\n": the bullet, a word and the newline */
const MIN_LINE_TOKENS = 3;

/** A turn's sentences, numbered from `order` on, one at a time; the lines of an earlier summary stay whole. */
function* sentencesOf(t: Turn, order: number): Generator<Unit> {
  const fromSummary = isSummaryTurn(t);
  const pieces: Array<{ text: string; line: (s: string) => string }> = [];
  if (fromSummary) {
    for (const raw of t.content.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith(SUMMARY_HEADING)) continue;
      // a bulleted line already names its speaker ("- user: …"); anything else is split like prose
      if (line.startsWith('- ')) pieces.push({ text: line.slice(2), line: (s) => `- ${s}` });
      else for (const s of splitSentences(line)) pieces.push({ text: s, line: (x) => `- ${x}` });
    }
  } else {
    for (const s of splitSentences(t.content)) pieces.push({ text: s, line: (x) => `- ${speaker(t)}: ${x}` });
  }
  for (const [i, p] of pieces.entries()) {
    const text = capWords(p.text);
    yield { order: order + i, line: p.line(text), text, terms: new Set(terms(text)), role: t.role, fromSummary, score: 0 };
  }
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+(?=\S)|\n+/u)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

function capWords(s: string): string {
  const words = s.split(' ');
  return words.length <= MAX_SENTENCE_WORDS ? s : `${words.slice(0, MAX_SENTENCE_WORDS).join(' ')} …`;
}

const NUMBER = /\p{N}/u;
const FIRST_PERSON_FACT =
  /\b(i am|i'm|i was|i live|i work|i like|i love|i prefer|i hate|i need|i want|i have|i've|i'll|i will|my|mine|call me|remember)\b/i;
const COMMITMENT = /\b(decided|decide|agreed|agree|deadline|due|will|plan|planned|must|remember|promise|schedule[ds]?)\b/i;
const FILLER = /^(hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|bye|goodbye|yes|no|got it|sounds good)\b/i;

function score(u: Unit, weight: (term: string) => number): number {
  if (u.terms.size === 0) return 0;
  let lexical = 0;
  for (const t of u.terms) lexical += weight(t);
  lexical /= Math.sqrt(u.terms.size);
  let bonus = 0;
  if (NUMBER.test(u.text)) bonus += 0.5;
  if (hasProperName(u.text)) bonus += 0.4;
  if (u.role === 'user' && FIRST_PERSON_FACT.test(u.text)) bonus += 0.6;
  if (COMMITMENT.test(u.text)) bonus += 0.3;
  if (u.fromSummary) bonus += 0.5;
  let s = lexical * (1 + bonus);
  if (u.terms.size < 3) s *= 0.5;
  if (FILLER.test(u.text) && u.text.split(' ').length < 6) return 0;
  return s;
}

/** a capitalized word that does not open the sentence and is not "I" */
function hasProperName(text: string): boolean {
  const words = text.split(/\s+/).slice(1);
  return words.some((w) => /^\p{Lu}[\p{Ll}\p{N}'-]+/u.test(w) && !/^I('|$)/.test(w));
}

function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / Math.min(a.size, b.size);
}

export function terms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'_-]*/gu) ?? [];
  return words.filter((w) => !STOPWORDS.has(w) && (w.length > 1 || NUMBER.test(w)));
}

const STOPWORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by can
  could did do does doing down during each few for from further had has have having he her here hers herself him himself his
  how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours
  ourselves out over own same she should so some such than that the their theirs them themselves then there these they this
  those through to too under until up very was we were what when where which while who whom why will with would you your
  yours yourself yourselves i'm i've i'll i'd you're you've it's that's there's don't doesn't didn't can't won't isn't
  aren't wasn't let's also yes ok okay oh well really like get got just thing things one much many lot know think
  hi hello hey thanks thank welcome please sure great sounds good`.split(/\s+/),
);
