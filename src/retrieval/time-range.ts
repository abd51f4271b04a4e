import { factOf, type TextFact } from './text-cache.js';

/**
 * Time expressions in a query ("last May", "in March 2024", "two weeks ago", "yesterday") turned into
 * a range of turn timestamps, so that a time question can be answered from the turns of that period.
 * Calendar arithmetic is in UTC. Month names are read the way people use them when looking back: "in
 * May" and "last May" are the most recent May before now ("last May" skips the current month, "in May"
 * does not), "this May" is this year's, and an explicit year wins. Words that are also ordinary words
 * ("may", "march") count as months only with a preposition, a modifier, a day or a year beside them, or
 * capitalized mid-sentence.
 */
export interface TimeRange {
  /** inclusive start, ISO-8601 */
  from: string;
  /** exclusive end, ISO-8601 */
  to: string;
  /** the words of the query that named the period (removed before the text search) */
  text: string;
  /** where those words start in the query */
  index: number;
}

const DAY = 86_400_000;
const MONTHS: Record<string, number> = {
  january: 0, jan: 0, february: 1, feb: 1, march: 2, mar: 2, april: 3, apr: 3, may: 4, june: 5, jun: 5, july: 6, jul: 6,
  august: 7, aug: 7, september: 8, sep: 8, sept: 8, october: 9, oct: 9, november: 10, nov: 10, december: 11, dec: 11,
};
/** month names that are also everyday words (or names): they need context to count as months */
const AMBIGUOUS_MONTHS = new Set(['may', 'march', 'mar', 'jan', 'august', 'aug', 'sep', 'dec', 'jun', 'oct', 'nov']);
const NUMBER_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  'a couple of': 2, 'a couple': 2, couple: 2, 'a few': 3, few: 3, several: 3,
};
const UNITS: Record<string, 'day' | 'week' | 'month' | 'year'> = {
  day: 'day', days: 'day', week: 'week', weeks: 'week', month: 'month', months: 'month', year: 'year', years: 'year',
};
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const SEASONS: Record<string, number> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11 };

const MONTH_WORD = Object.keys(MONTHS).sort((a, b) => b.length - a.length).join('|');
const NUMBER = `\\d{1,3}|${Object.keys(NUMBER_WORDS).sort((a, b) => b.length - a.length).join('|')}`;
const PREP = '(?:(?:back|way back)\\s+)?(?:in|during|from|on|around|over|since|of)';

interface Matcher {
  re: RegExp;
  resolve: (m: RegExpExecArray, now: Date, query: string) => [Date, Date] | null;
}

const MATCHERS: Matcher[] = [
  // 2024-05-03 or 2024-05
  {
    re: /\b(\d{4})-(\d{2})(?:-(\d{2}))?\b/g,
    resolve: (m) => {
      const y = Number(m[1]);
      const mo = Number(m[2]) - 1;
      if (mo < 0 || mo > 11) return null;
      if (m[3] === undefined) return monthRange(y, mo);
      const d = Number(m[3]);
      return d >= 1 && d <= 31 ? [utc(y, mo, d), utc(y, mo, d + 1)] : null;
    },
  },
  // [in|last|this|early…] May [3rd] [, 2024]   and   [on] 3rd [of] May [2024]
  {
    re: new RegExp(
      `\\b(?:(${PREP}|last|this|next|previous)\\s+)?(?:(?:the\\s+)?(early|mid|late|end of|start of|beginning of)[\\s-]+)?` +
        `(?:(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?)?(${MONTH_WORD})\\b\\.?(?:\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b)?(?:,?\\s+(\\d{4})\\b)?`,
      'gi',
    ),
    resolve: (m, now, query) => {
      const [, modifier, part, dayBefore, monthWord, dayAfter, year] = m;
      const word = monthWord!.toLowerCase();
      const month = MONTHS[word]!;
      const day = dayBefore ?? dayAfter;
      const hasContext = modifier !== undefined || part !== undefined || day !== undefined || year !== undefined;
      if (AMBIGUOUS_MONTHS.has(word) && !hasContext && !capitalizedMidSentence(query, m.index + m[0].indexOf(monthWord!))) return null;
      if (!AMBIGUOUS_MONTHS.has(word) && word.length <= 3 && !hasContext) return null;
      const mod = modifier?.toLowerCase().replace(/\s+/g, ' ');
      let y: number;
      if (year !== undefined) y = Number(year);
      else if (mod === 'this') y = now.getUTCFullYear();
      else if (mod === 'next') y = month > now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() + 1;
      else if (mod === 'last' || mod === 'previous') y = month < now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
      else y = month <= now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
      if (day !== undefined) {
        const d = Number(day);
        if (d < 1 || d > 31) return null;
        return [utc(y, month, d), utc(y, month, d + 1)];
      }
      const [from, to] = monthRange(y, month);
      const p = part?.toLowerCase();
      if (p === 'early' || p === 'start of' || p === 'beginning of') return [from, utc(y, month, 11)];
      if (p === 'mid') return [utc(y, month, 11), utc(y, month, 21)];
      if (p === 'late' || p === 'end of') return [utc(y, month, 21), to];
      if (mod === 'since') return [from, now];
      return [from, to];
    },
  },
  // N days/weeks/months/years ago — the unit around that point
  {
    re: new RegExp(`\\b(${NUMBER})\\s+(days?|weeks?|months?|years?)\\s+ago\\b`, 'gi'),
    resolve: (m, now) => {
      const n = amount(m[1]!);
      const unit = UNITS[m[2]!.toLowerCase()]!;
      if (n === null) return null;
      const centre = shift(now, unit, -n);
      return [shift(centre, unit, -0.5), shift(centre, unit, 0.5)];
    },
  },
  // in the past/last N days/weeks/months
  {
    re: new RegExp(`\\b(?:in\\s+|over\\s+|during\\s+)?the\\s+(?:past|last|previous)\\s+(${NUMBER})\\s+(days?|weeks?|months?|years?)\\b`, 'gi'),
    resolve: (m, now) => {
      const n = amount(m[1]!);
      return n === null ? null : [shift(now, UNITS[m[2]!.toLowerCase()]!, -n), now];
    },
  },
  // last/this/earlier this week/month/year, last weekend
  {
    re: /\b(?:(earlier|later)\s+)?(last|this|previous|past)\s+(week|weekend|month|year)\b/gi,
    resolve: (m, now) => {
      const which = m[2]!.toLowerCase() === 'this' ? 0 : -1;
      const unit = m[3]!.toLowerCase();
      if (unit === 'weekend') {
        // the most recent Saturday–Sunday that has ended (this weekend: the current or coming one)
        const monday = startOfWeek(now);
        const start = new Date(monday.getTime() + (which === 0 ? 5 : -2) * DAY);
        return [start, new Date(start.getTime() + 2 * DAY)];
      }
      if (unit === 'week') {
        const start = new Date(startOfWeek(now).getTime() + which * 7 * DAY);
        return [start, which === 0 ? now : new Date(start.getTime() + 7 * DAY)];
      }
      if (unit === 'month') {
        const [from, to] = monthRange(now.getUTCFullYear(), now.getUTCMonth() + which);
        return [from, which === 0 ? now : to];
      }
      const y = now.getUTCFullYear() + which;
      return [utc(y, 0, 1), which === 0 ? now : utc(y + 1, 0, 1)];
    },
  },
  // today, yesterday, the day before yesterday
  {
    re: /\b(the day before yesterday|yesterday|today|tonight|this morning|this afternoon|this evening)\b/gi,
    resolve: (m, now) => {
      const word = m[1]!.toLowerCase();
      const today = utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const back = word === 'yesterday' ? 1 : word.startsWith('the day before') ? 2 : 0;
      const from = new Date(today.getTime() - back * DAY);
      return [from, back === 0 ? now : new Date(from.getTime() + DAY)];
    },
  },
  // last Friday: the most recent Friday before today
  {
    re: /\blast\s+(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/gi,
    resolve: (m, now) => {
      const wanted = WEEKDAYS.indexOf(m[1]!.toLowerCase());
      const today = utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const back = ((today.getUTCDay() - wanted + 6) % 7) + 1;
      const from = new Date(today.getTime() - back * DAY);
      return [from, new Date(from.getTime() + DAY)];
    },
  },
  // [last|this|in the] summer [2024]
  {
    re: /\b(?:(last|this|next|previous)\s+|(?:(?:back\s+)?(?:in|during|over)\s+)?the\s+)?(spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?(\d{4})\b)?/gi,
    resolve: (m, now) => {
      const [, modifier, season, year] = m;
      const hasContext = modifier !== undefined || year !== undefined || /\bthe\s/i.test(m[0]);
      if (!hasContext) return null;
      const start = SEASONS[season!.toLowerCase()]!;
      const mod = modifier?.toLowerCase();
      // a season is named by the year it starts in (winter 2024 = Dec 2024 – Feb 2025)
      const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
      let y: number;
      if (year !== undefined) y = Number(year);
      else {
        y = now.getUTCFullYear() + (start > now.getUTCMonth() ? -1 : 0); // the most recent one that has started
        const inProgress = current < y * 12 + start + 3;
        if ((mod === 'last' || mod === 'previous') && inProgress) y -= 1;
        if (mod === 'next') y += 1;
      }
      return [utc(y, start, 1), utc(y, start + 3, 1)];
    },
  },
  // in 2024, during 2023, since 2022
  {
    re: /\b(in|during|since|of|from|back in|throughout)\s+((?:19|20)\d{2})\b(?![-/]\d)/gi,
    resolve: (m, now) => {
      const y = Number(m[2]);
      return m[1]!.toLowerCase() === 'since' ? [utc(y, 0, 1), now] : [utc(y, 0, 1), utc(y + 1, 0, 1)];
    },
  },
];

/**
 * The first time expression of the query as a range of timestamps, or null when it names none. A
 * relative expression followed by the day it counts back from ("last Friday on 23 January, 2022",
 * "last weekend before April 10, 2023") is read from that day, not from now, and both are its text.
 */
export function parseTimeRange(query: string, now: number | Date = Date.now()): TimeRange | null {
  const at = new Date(now);
  const first = firstRange(query, at);
  if (!first || !COUNTS_BACK.test(first.text)) return first;
  const end = first.index + first.text.length;
  const joint = /^\s*,?\s*(?:(?:on|before|as of|prior to)\s+)?/i.exec(query.slice(end))![0];
  const anchor = firstRange(query.slice(end + joint.length), at);
  if (!anchor || anchor.index !== 0 || COUNTS_BACK.test(anchor.text) || Date.parse(anchor.to) - Date.parse(anchor.from) !== DAY) return first;
  const counted = firstRange(first.text, new Date(anchor.from));
  if (!counted) return first;
  return { from: counted.from, to: counted.to, text: query.slice(first.index, end + joint.length + anchor.text.length), index: first.index };
}

function firstRange(query: string, at: Date): TimeRange | null {
  let best: TimeRange | null = null;
  for (const { re, resolve } of MATCHERS) {
    for (const m of query.matchAll(re)) {
      if (best && m.index >= best.index) break;
      const range = resolve(m, at, query);
      if (!range || !(range[0] < range[1])) continue;
      best = { from: range[0].toISOString(), to: range[1].toISOString(), text: m[0].trim(), index: m.index };
      break;
    }
  }
  return best;
}

/**
 * Phrases that name the present ("these days", "at the moment"): they ask for the current state, which
 * ranking already prefers (newer statements supersede older ones), and carry no subject to search for.
 */
const PRESENT = /\b(?:these days|nowadays|at the moment|at present|currently|right now|as of now|as of today|for now)\b/gi;

/** The query with its time expression and present-tense phrases taken out, for the text and vector searches. */
export function withoutTimeExpression(query: string, range: TimeRange | null): string {
  const rest = range ? `${query.slice(0, range.index)} ${query.slice(range.index + range.text.length)}` : query;
  // runs of whitespace collapse before the space before punctuation goes: `\s+([?.!,])` retried the
  // whole run from each of its characters (a 4,000-character run of spaces held the event loop ~20 ms)
  return rest.replace(PRESENT, ' ').replace(/\s+/g, ' ').replace(/ ([?.!,])/g, '$1').trim();
}

/** a time expression that counts back from when it was said ("yesterday", "last week", "two days ago") */
const COUNTS_BACK = /\b(?:yesterday|ago|last|past|previous)\b/i;
/** COUNTS_BACK's words anywhere, word boundaries or not: a text without them holds no part that matches it */
const MAY_COUNT_BACK = /yesterday|ago|last|past|previous/i;

/**
 * The date a memory's "yesterday" or "last week" means, read from when it was said: "yesterday" said
 * on 2023-05-08 is 2023-05-07. A time question is answered by the turn that mentions the event, and
 * the model reading it needs the event's date, not the date of the conversation. Null when the text
 * names no such expression (a month name or "in May" is left as said: it may look ahead).
 */
export function mentionedDate(text: string, createdAt: string): { text: string; from: string; to: string } | null {
  const range = mentionedRange(text, createdAt);
  if (!range) return null;
  const last = new Date(Date.parse(range.to) - 1).toISOString().slice(0, 10);
  return { text: range.text, from: range.from.slice(0, 10), to: last };
}

/** what mentionedRange has read of memories' texts, in characters (tests count work with it) */
export const mentionedWork = { chars: 0 };

/** how many moments a text's mentioned periods are kept for: the same text said at many (a "Thanks!") is read again past them */
const MOMENTS_PER_TEXT = 16;

/**
 * A memory's mentioned period, by when it was said, kept with its text (text-cache.ts): every result
 * line of every pass asks (prompt blocks), and a time question asks of every candidate (aboutPeriod);
 * finding the first time expression reads the whole text with every matcher, 1–5 ms for a long turn.
 */
const MENTIONED: TextFact<Map<string, TimeRange | null>> = { name: 'mentioned ranges', compute: () => new Map() };

/** The period a memory's "yesterday" or "last year" names, read from when it was said (see mentionedDate). */
export function mentionedRange(text: string, createdAt: string): TimeRange | null {
  const known = factOf(text, MENTIONED);
  const hit = known.get(createdAt);
  if (hit !== undefined) return hit;
  mentionedWork.chars += text.length;
  const range = readMentionedRange(text, createdAt);
  if (known.size >= MOMENTS_PER_TEXT) known.clear();
  known.set(createdAt, range);
  return range;
}

function readMentionedRange(text: string, createdAt: string): TimeRange | null {
  // the range's text is part of the memory's, so a memory holding none of COUNTS_BACK's words, even
  // inside another word, names no such period: most do not
  if (!MAY_COUNT_BACK.test(text)) return null;
  const range = parseTimeRange(text, Date.parse(createdAt));
  return range && COUNTS_BACK.test(range.text) ? range : null;
}

/**
 * Whether a memory belongs to a period a query names: it was said in it, or it is a turn that dates
 * what it tells back into it ("Last year I helped renovate a community center", said in 2023, is about
 * 2022). A question about then is answered by the turn that mentions the event, whenever it was said.
 */
export function aboutPeriod(m: { kind: string; content: string; created_at: string }, range: TimeRange): boolean {
  if (inRange(m.created_at, range)) return true;
  if (m.kind !== 'turn') return false;
  const said = mentionedRange(m.content, m.created_at);
  return said !== null && said.from < range.to && said.to > range.from;
}

/** Whether an ISO timestamp falls inside the range. */
export function inRange(createdAt: string, range: TimeRange): boolean {
  const t = Date.parse(createdAt);
  return t >= Date.parse(range.from) && t < Date.parse(range.to);
}

function utc(y: number, m: number, d: number): Date {
  return new Date(Date.UTC(y, m, d));
}

function monthRange(y: number, m: number): [Date, Date] {
  return [utc(y, m, 1), utc(y, m + 1, 1)];
}

function startOfWeek(now: Date): Date {
  const today = utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const sinceMonday = (today.getUTCDay() + 6) % 7;
  return new Date(today.getTime() - sinceMonday * DAY);
}

function shift(d: Date, unit: 'day' | 'week' | 'month' | 'year', n: number): Date {
  if (unit === 'day') return new Date(d.getTime() + n * DAY);
  if (unit === 'week') return new Date(d.getTime() + n * 7 * DAY);
  const months = unit === 'month' ? n : n * 12;
  const whole = Math.trunc(months);
  const out = new Date(d);
  out.setUTCMonth(out.getUTCMonth() + whole);
  return new Date(out.getTime() + (months - whole) * 30.44 * DAY);
}

function amount(word: string): number | null {
  const w = word.toLowerCase().replace(/\s+/g, ' ');
  if (/^\d+$/.test(w)) return Number(w);
  return NUMBER_WORDS[w] ?? null;
}

/** "May" starting a sentence is usually the verb; mid-sentence and capitalized it is usually the month. */
function capitalizedMidSentence(query: string, index: number): boolean {
  const ch = query[index];
  if (!ch || ch !== ch.toUpperCase()) return false;
  const before = query.slice(0, index).trimEnd();
  return before.length > 0 && !/[.!?]$/.test(before);
}
