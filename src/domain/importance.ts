import type { Role } from './turn.js';

const FIRST_PERSON_FACT =
  /\b(i am|i'm|i was|i have|i've|i had|my|mine|i live|i work|i like|i love|i hate|i prefer|i need|i want|i moved|i started|i bought|i went|we are|we're|our|remember|don't forget|note that|from now on|always|never|allergic|birthday|deadline|appointment)\b/i;
const DATE_OR_NUMBER = /\b(\d{1,4}([:/.-]\d{1,4})*|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|tomorrow|yesterday|next week|last week)\b/i;
const PROPER_NOUN = /(?:^|[^.!?]\s)[A-Z][a-z]{2,}/;
const CHITCHAT = /^\s*(ok(ay)?|k|thanks?( you)?|thx|ty|cool|great|nice|sure|yes|no|yep|nope|hi|hello|hey|bye|lol|haha|hmm+|got it|sounds good|:\)|👍)[\s.!?]*$/i;

/**
 * Words that make up greetings, thanks and sign-offs. A short turn made only of them ("thanks, that
 * is all for now", "evening Nova, quick one") says nothing worth keeping.
 */
const PLEASANTRIES = new Set(
  `ok okay k kk thanks thank thx ty you so much very cool great nice good perfect awesome brilliant lovely excellent sure yes yeah yep
  yup no nope nah alright right fine got it that that's is all for now bye goodbye cya see ya later talk soon speak night goodnight
  morning evening afternoon hi hey hello hiya again lol haha hahaha hehe hmm hm ah oh wow sounds gotta run will do np no worries
  cheers welcome noted quick one question the a and anytime take care have day`
    .split(/\s+/)
    .filter(Boolean),
);
const WORD = /[\p{L}\p{N}']+/gu;

/** Greetings, thanks and sign-offs ("ok thanks", "hey Nova"): turns that say nothing to remember. */
export function isFiller(content: string): boolean {
  return CHITCHAT.test(content) || isPleasantry(content);
}

/** Greetings and thanks, with at most one name among them ("hey Nova"). */
function isPleasantry(content: string): boolean {
  // a ninth word settles it: a long reply is never split into all of its words (ranking asks this of
  // every candidate, assistant replies of thousands of words among them)
  const words: string[] = [];
  for (const m of content.matchAll(WORD)) if (words.push(m[0]) > 8) return false;
  if (words.length === 0) return !/[\p{L}\p{N}]/u.test(content); // emoji and punctuation only
  let names = 0;
  for (const w of words) {
    if (PLEASANTRIES.has(w.toLowerCase())) continue;
    if (/^\p{Lu}/u.test(w) && ++names <= 1) continue;
    return false;
  }
  return words.length > names;
}

/**
 * Where a turn's importance starts. The two speakers of a conversation start alike: what the
 * assistant said ("the schedule we set up", "the budget you calculated") is asked about as much as
 * what the user said, and the same conversation with its roles swapped keeps the same memories.
 * System prompts and tool output are not statements of either, and start lower.
 */
const ROLE_BASE: Record<Role, number> = { user: 0.4, assistant: 0.4, system: 0.3, tool: 0.15 };

/**
 * The importance of a turn that carries none, in [0, 1]. A transparent heuristic, not a model:
 * start from the role (see ROLE_BASE), add for first-person facts and preferences, dates and numbers,
 * names, and substance (length, up to a point); greetings, thanks, acknowledgements and sign-offs
 * score near zero. With the default `importance_threshold` (0.3) every statement of substance is kept,
 * whoever said it, and "ok thanks" or "Noted!" is not.
 *
 * A short turn that is not a pleasantry is kept: it is usually an answer ("casa verde", "nine",
 * "dr okafor" after the other speaker asked), and the retrieval pass reads it together with the
 * question before it. Short system and tool turns are marked down.
 */
export function scoreImportance(content: string, role: Role): number {
  if (isFiller(content)) return 0.05;
  let score = ROLE_BASE[role];
  if (FIRST_PERSON_FACT.test(content)) score += 0.25;
  if (DATE_OR_NUMBER.test(content)) score += 0.1;
  if (PROPER_NOUN.test(content)) score += 0.1;
  const words = content.trim().split(/\s+/).length;
  if (words >= 8) score += 0.05;
  if (words >= 25) score += 0.05;
  if (words < 4 && (role === 'system' || role === 'tool')) score -= 0.15;
  return Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000;
}
