/** Who talks, and what is said about the people in a user's life. */

export const USER_NAMES = [
  'Maya', 'Daniel', 'Aisha', 'Tomasz', 'Lucia', 'Kenji', 'Farah', 'Oliver', 'Ingrid', 'Mateo', 'Chloe', 'Arjun', 'Sofia', 'Emeka',
  'Hannah', 'Rafael', 'Yuki', 'Leila', 'Connor', 'Nadia', 'Felix', 'Amara', 'Jonas', 'Beatriz', 'Samir', 'Greta', 'Malik', 'Elena',
  'Theo', 'Zara', 'Pavel', 'Imogen',
];

export const ASSISTANT_NAMES = ['Nova', 'Sage', 'Wren', 'Echo', 'Orion', 'Juno'];

export const PERSON_NAMES = [
  'Priya', 'Marcus', 'Ines', 'Callum', 'Rosa', 'Tobias', 'Mei', 'Dmitri', 'Grace', 'Hugo', 'Anouk', 'Bilal', 'Clara', 'Desmond',
  'Esme', 'Florian', 'Gemma', 'Haruto', 'Isla', 'Joaquin', 'Kira', 'Lars', 'Mira', 'Niall', 'Odette', 'Pedro', 'Quinn', 'Rhea',
  'Stellan', 'Talia', 'Umar', 'Vera', 'Wendell', 'Ximena', 'Yusuf', 'Zoltan', 'Amelie', 'Bruno', 'Cosima', 'Dario', 'Elif', 'Fergus',
  'Giulia', 'Henrik', 'Ivy', 'Jasper', 'Keiko', 'Lorenzo', 'Magnus', 'Noor', 'Orla', 'Pilar', 'Ruben', 'Saoirse', 'Tariq', 'Ulla',
];

export interface Relation {
  word: string;
  /** subject and possessive pronoun */
  they: string;
  their: string;
}

export const RELATIONS: readonly Relation[] = [
  { word: 'sister', they: 'she', their: 'her' },
  { word: 'brother', they: 'he', their: 'his' },
  { word: 'cousin', they: 'she', their: 'her' },
  { word: 'best friend', they: 'he', their: 'his' },
  { word: 'neighbour', they: 'she', their: 'her' },
  { word: 'manager', they: 'he', their: 'his' },
  { word: 'roommate', they: 'she', their: 'her' },
  { word: 'aunt', they: 'she', their: 'her' },
  { word: 'uncle', they: 'he', their: 'his' },
  { word: 'mentor', they: 'she', their: 'her' },
];

/** The one turn that says who a person is to the user (the first half of a two-turn question). */
export const INTRODUCTIONS: ReadonlyArray<(rel: Relation, p: string) => string> = [
  (r, p) => `My ${r.word} ${p} is visiting next week, staying with us for a few days.`,
  (r, p) => `Had dinner with my ${r.word} ${p} tonight, we talked for hours.`,
  (r, p) => `My ${r.word} ${p} called earlier, ${r.they} says hi, ha.`,
  (r, p) => `Spent the afternoon helping my ${r.word} ${p} assemble a wardrobe.`,
];

/** A later turn about the person by name only; the question names the relation, so both turns are needed. */
export interface ChainFact {
  key: string;
  values: readonly string[];
  statement: (p: string, v: string, r: Relation) => string;
  question: (r: Relation) => string;
}

export const CHAIN_FACTS: readonly ChainFact[] = [
  {
    key: 'program',
    values: ['nursing', 'architecture', 'veterinary', 'music therapy', 'marine biology'],
    statement: (p, v) => `${p} got accepted into a ${v} program, we are all so proud!`,
    question: (r) => `Which program did my ${r.word} get accepted into?`,
  },
  {
    key: 'moving',
    values: ['Edinburgh', 'Montreal', 'Singapore', 'Barcelona', 'Vancouver', 'Dublin'],
    statement: (p, v, r) => `${p} is moving to ${v} in the autumn, I'm gutted but happy for ${r.their === 'his' ? 'him' : 'her'}.`,
    question: (r) => `Where is my ${r.word} moving to?`,
  },
  {
    key: 'kitten',
    values: ['Miso', 'Pumpkin', 'Socks', 'Luna', 'Gizmo'],
    statement: (p, v) => `${p} adopted a kitten called ${v}, the photos are ridiculous.`,
    question: (r) => `What is my ${r.word}'s kitten called?`,
  },
  {
    key: 'wedding',
    values: ['an old boathouse on the lake', 'a vineyard outside Porto', 'the botanical gardens', 'a barn in the Cotswolds'],
    statement: (p, v) => `${p}'s wedding is going to be at ${v}, I've been asked to give a speech!`,
    question: (r) => `Where is my ${r.word}'s wedding going to be?`,
  },
  {
    key: 'phd',
    values: ['coral reef acoustics', 'medieval trade routes', 'battery chemistry', 'sleep in teenagers'],
    statement: (p, v) => `${p} finally finished the PhD on ${v}, celebration drinks on Friday.`,
    question: (r) => `What was my ${r.word}'s PhD about?`,
  },
];

/** What a person says when they join the chat themselves (the turn's `name` is theirs, the text never names them). */
export interface ParticipantFact {
  key: string;
  values: readonly string[];
  statement: (v: string) => string;
  question: (p: string) => string;
}

export const PARTICIPANT_FACTS: readonly ParticipantFact[] = [
  {
    key: 'training',
    values: ['the Chicago marathon', 'a swim across the bay', 'my first triathlon', 'a 50 km ultra'],
    statement: (v) => `I'm training for ${v}, can you draft me a weekly plan?`,
    question: (p) => `What is ${p} training for?`,
  },
  {
    key: 'study',
    values: ['landscape architecture', 'speech therapy', 'astrophysics', 'pastry arts'],
    statement: (v) => `I'm thinking of studying ${v} next year, is that silly at thirty?`,
    question: (p) => `What does ${p} want to study?`,
  },
  {
    key: 'apartment',
    values: ['Rotterdam', 'Glasgow', 'Bologna', 'Quebec City'],
    statement: (v) => `My new apartment in ${v} has no oven, what can I cook on two burners?`,
    question: (p) => `Where is ${p}'s new apartment?`,
  },
  {
    key: 'boss_gift',
    values: ['orchids', 'vintage fountain pens', 'jazz records', 'hot sauce'],
    statement: (v) => `I need a gift for my boss, she is obsessed with ${v}.`,
    question: (p) => `What is ${p}'s boss obsessed with?`,
  },
];

export const PARTICIPANT_GREETINGS: ReadonlyArray<(assistant: string, p: string, user: string) => string> = [
  (a, p, u) => `Hi ${a}, it's ${p}! ${u} said I could borrow you for a minute.`,
  (a, p, u) => `Hello ${a}, ${p} here, ${u} is making tea so I'm hijacking the chat.`,
];

export const PARTICIPANT_GOODBYES = ['Thanks so much, handing you back now!', 'Perfect, thank you! Bye!', 'Brilliant, that helps. Bye for now.'];

/** Something a person did, told by the user (time questions ask about it by month). */
export const PERSON_EVENTS: ReadonlyArray<(p: string, r: Relation) => string> = [
  (p, r) => `${p} ran ${r.their} first half marathon on Sunday, I cried at the finish line.`,
  (p) => `${p} got back from two weeks hiking in Patagonia with the worst sunburn.`,
  (p, r) => `${p} opened ${r.their} own bakery this week, the cinnamon buns sold out by ten.`,
  (p) => `${p} won the regional chess tournament, completely unexpected.`,
  (p, r) => `${p} passed ${r.their} driving test on the fourth try, finally.`,
  (p) => `${p} performed stand-up comedy for the first time at an open mic.`,
  (p) => `${p} climbed Ben Nevis for charity and raised a small fortune.`,
];

/** Turns sharing words with the questions about people, without the facts. */
export const PEOPLE_DISTRACTORS = [
  'Moving furniture alone was a terrible idea, never again.',
  'Is that new cooking program on TV worth watching?',
  'My boss wants the report by Friday, naturally.',
  'A wedding invite arrived from a colleague I barely know.',
  'Why are kittens so chaotic at night?',
  'Training the new starters at work all week.',
  'Thinking about studying something new online, maybe photography.',
  'Apartment hunting sounds like a nightmare in this market.',
  'Do you think a PhD is worth it these days?',
  'Got accepted to the waiting list for the allotment, finally!',
];

/** Passing mentions of a person: the name appears without any fact worth asking about. */
export const PERSON_MENTIONS: ReadonlyArray<(p: string) => string> = [
  (p) => `${p} says hi, by the way.`,
  (p) => `Meeting ${p} for lunch tomorrow, I need a place that does good soup.`,
  (p) => `${p} sent me the funniest video of a goat on a trampoline.`,
  (p) => `Going to ${p}'s for a board game night, wish me luck.`,
  (p) => `${p} borrowed my umbrella and I'll never see it again.`,
];
