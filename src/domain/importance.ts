import type { Role } from './turn.js';

const FIRST_PERSON_FACT =
  /\b(i am|i'm|i was|i have|i've|i had|my|mine|i live|i work|i like|i love|i hate|i prefer|i need|i want|i moved|i started|i bought|i went|we are|we're|our|remember|don't forget|note that|from now on|always|never|allergic|birthday|deadline|appointment)\b/i;
const DATE_OR_NUMBER = /\b(\d{1,4}([:/.-]\d{1,4})*|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|tomorrow|yesterday|next week|last week)\b/i;
const PROPER_NOUN = /(?:^|[^.!?]\s)[A-Z][a-z]{2,}/;
const CHITCHAT = /^\s*(ok(ay)?|k|thanks?( you)?|thx|ty|cool|great|nice|sure|yes|no|yep|nope|hi|hello|hey|bye|lol|haha|hmm+|got it|sounds good|:\)|👍)[\s.!?]*$/i;

const ROLE_BASE: Record<Role, number> = { user: 0.4, assistant: 0.25, system: 0.3, tool: 0.15 };

/**
 * The importance of a turn that carries none, in [0, 1]. A transparent heuristic, not a model:
 * start from the role (what the user says about themselves matters most), add for first-person facts
 * and preferences, dates and numbers, names, and substance (length, up to a point); chit-chat scores
 * near zero. With the default `importance_threshold` (0.3) a user's statement of substance is kept,
 * an assistant's reply is kept when it carries facts, and "ok thanks" is not.
 */
export function scoreImportance(content: string, role: Role): number {
  if (CHITCHAT.test(content)) return 0.05;
  let score = ROLE_BASE[role];
  if (FIRST_PERSON_FACT.test(content)) score += 0.25;
  if (DATE_OR_NUMBER.test(content)) score += 0.1;
  if (PROPER_NOUN.test(content)) score += 0.1;
  const words = content.trim().split(/\s+/).length;
  if (words >= 8) score += 0.05;
  if (words >= 25) score += 0.05;
  if (words < 4) score -= 0.15;
  return Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000;
}
