/**
 * Whose fact a statement is: the person (or thing) it tells something about. "My sister Ana just started
 * a new job" is about the sister (and Ana); "I was hired as a product manager" is about whoever said it.
 * Supersession compares these: a newer statement replaces an older one only when both tell about the
 * same holder, so a change in the user's job never marks the sister's job as replaced.
 */
import { factOf, type TextFact } from './text-cache.js';

/**
 * People a speaker names by their relation to them ("my sister", "our landlord"). A closed class of
 * English nouns, not a list fitted to a dataset: after "my", "our", "his", "her", "their" these name
 * someone else; any other noun there ("my job", "my car") is the speaker's own attribute.
 */
const RELATIONS = new Set(
  `mother mom mum mommy mummy father dad daddy parent parents sister sis brother bro sibling siblings son daughter
  child children kid kids baby wife husband partner spouse girlfriend boyfriend fiance fiancee ex grandmother grandma
  granny grandfather grandpa grandparents grandson granddaughter aunt uncle cousin niece nephew friend friends bestie
  roommate flatmate housemate neighbour neighbor neighbours neighbors colleague colleagues coworker coworkers boss
  manager mentor teacher coach landlord landlady doctor therapist dentist family`
    .split(/\s+/)
    .filter(Boolean),
);

const FIRST_PERSON = new Set(['i', "i'm", "i've", "i'd", "i'll", 'im', 'ive', 'me', 'myself', 'mine', 'we', "we're", "we've", 'us', 'ourselves']);
const POSSESSIVE = new Set(['my', 'our', 'his', 'her', 'their', 'your']);
/** capitalised words that name no one: sentence-initial words are skipped anyway */
const NOT_NAMES = new Set(
  `i i'm i've i'd i'll monday tuesday wednesday thursday friday saturday sunday january february march april may june july
  august september october november december`
    .split(/\s+/)
    .filter(Boolean),
);

const SELF = '\u0000self';
const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}'’]*|[.!?;:]/gu;

/**
 * The holders a statement tells about: relations it names ("my sister" → sister), names written with a
 * capital inside a sentence ("Ana"), and the speaker (SELF) when it speaks in the first person of
 * itself ("I", "my job"). Empty when it names none of them ("Sounds great, congrats!").
 */
export function holdersOf(content: string, speakerName?: string | null): Set<string> {
  const { told, names } = factOf(content, TOLD);
  const out = new Set(told);
  const own = new Set((speakerName ?? '').toLowerCase().split(/\s+/).filter(Boolean));
  for (const w of names) out.add(own.has(w) ? SELF : w);
  return out;
}

/**
 * What a text tells of its holders whoever said it: relations and the first person (`told`), and the
 * names written with a capital inside a sentence (`names`, lower-cased), which holdersOf reads as the
 * speaker when they are the speaker's own. Kept by text (text-cache.ts): supersession asks it of the
 * same statements pass after pass.
 */
const TOLD: TextFact<{ told: ReadonlySet<string>; names: ReadonlySet<string> }> = { name: 'holders', compute: holdersTold };

function holdersTold(content: string): { told: Set<string>; names: Set<string> } {
  const out = new Set<string>();
  const names = new Set<string>();
  let sentenceStart = true;
  // a possessive seen and the words it may still reach: "my older sister" names the sister
  let owner: { who: string; left: number } | null = null;
  const settle = () => {
    if (owner && (owner.who === 'my' || owner.who === 'our')) out.add(SELF);
    owner = null;
  };
  for (const m of content.matchAll(TOKEN)) {
    const raw = m[0].replace(/’/g, "'");
    if (/^[.!?;:]$/.test(raw)) {
      settle();
      sentenceStart = true;
      continue;
    }
    const w = raw.toLowerCase().replace(/'s$/, '');
    if (owner && RELATIONS.has(w)) {
      out.add(w);
      owner = null;
    } else if (POSSESSIVE.has(w)) {
      settle();
      owner = { who: w, left: 2 };
    } else {
      if (owner && --owner.left === 0) settle();
      if (FIRST_PERSON.has(w)) out.add(SELF);
      else if (!sentenceStart && /^\p{Lu}/u.test(raw) && !NOT_NAMES.has(w)) names.add(w);
    }
    sentenceStart = false;
  }
  settle();
  return { told: out, names };
}

/** A question about the asker's own state ("where do I live?", "what is my job?") or about no one named. */
export function asksAboutSelf(query: string): boolean {
  for (const h of holdersOf(query)) if (h !== SELF) return false;
  return true;
}

/**
 * Whether two statements may tell about the same holder: they share one, or neither names any (a
 * statement that names no one cannot be told apart, as before subjects were compared).
 */
export function sameHolder(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size === 0 && b.size === 0) return true;
  for (const x of a) if (b.has(x)) return true;
  return false;
}

const SECOND_PERSON = new Set(['you', 'your', 'yours', 'yourself', "you're", "you've", "you'd", "you'll"]);

/**
 * Whose statements a question asks about by its grammatical person, when it names no one else: "what
 * did I do last June?" asks about the asker (the user's own turns), "what did you suggest in May?"
 * about the one asked (the assistant's). Null when it names a holder, or speaks in both persons or
 * neither. The words alone decide, not who said a memory: the caller compares it with the speakers.
 */
export function askedOf(query: string): 'asker' | 'asked' | null {
  let first = false;
  let second = false;
  for (const m of query.toLowerCase().matchAll(TOKEN)) {
    const w = m[0].replace(/’/g, "'");
    if (FIRST_PERSON.has(w) || w === 'my' || w === 'our') first = true;
    else if (SECOND_PERSON.has(w)) second = true;
  }
  if (first === second || !asksAboutSelf(query)) return null;
  return first ? 'asker' : 'asked';
}
