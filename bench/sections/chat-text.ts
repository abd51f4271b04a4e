// Chat-like turns and queries for the ingest and retrieve benchmarks, from a fixed seed: templates over
// everyday vocabulary plus a long tail of rare words (names of pets, products, streets), so that
// word frequencies look like a real conversation log — a few words in many turns, most in few —
// which is what FTS cost and lexical-embedding quality depend on.
// Takes: a seed. Returns: turn texts and matching queries.

const NAMES = 'Anna Ben Carla David Elena Farid Greta Hugo Ines Jonas Kira Leo Maya Nico Olga Pablo Quinn Rosa Sami Tara Umar Vera Walt Xenia Yusuf Zoe Amir Bea Chen Dana Emil Fatima Goran Hana Ivan Jana Kofi Lena Marco Nora Omar Priya Rafael Sofia Tomas Uma Viktor Wen Yara Zeno'.split(' ');
const PLACES = 'Berlin Lisbon Kyoto Denver Oslo Nairobi Lima Porto Seoul Dublin Austin Krakow Hanoi Quebec Tbilisi Valencia Bergen Cusco Tallinn Zagreb Malmo Bruges Leeds Lyon Genoa Sapporo Perth Hobart Calgary Tucson'.split(' ');
const ACTIVITIES = ['hiking', 'climbing', 'sailing', 'pottery', 'chess', 'running', 'cycling', 'baking sourdough', 'birdwatching', 'swimming', 'yoga', 'painting', 'knitting', 'gardening', 'salsa dancing', 'photography', 'kayaking', 'skiing', 'surfing', 'woodworking', 'playing violin', 'learning Japanese', 'board games', 'camping'];
const FOODS = ['ramen', 'tacos', 'lasagna', 'curry', 'dumplings', 'paella', 'falafel', 'risotto', 'pancakes', 'sushi', 'goulash', 'pho', 'burritos', 'gnocchi', 'shakshuka', 'empanadas', 'kimchi stew', 'moussaka', 'pierogi', 'biryani'];
const THINGS = ['bicycle', 'laptop', 'guitar', 'camera', 'apartment', 'car', 'garden', 'kitchen', 'phone', 'backpack', 'tent', 'piano', 'aquarium', 'balcony', 'bookshelf', 'espresso machine', 'sofa', 'drone', 'telescope', 'sewing machine'];
const RELATIONS = ['sister', 'brother', 'mother', 'father', 'cousin', 'neighbour', 'colleague', 'best friend', 'boss', 'roommate', 'aunt', 'grandfather'];
const WHEN = ['last week', 'yesterday', 'in March', 'over the summer', 'two years ago', 'every Sunday', 'on my birthday', 'after work', 'this morning', 'in December', 'last spring', 'next month'];
const SYLLABLES = 'ka lo mi ne ru sa te vo zi ba do fe gu hi ja ko lu ma no pe ri so tu va we xi yo za bre dri fla gro kri pla sto tra'.split(' ');

const USER: Array<(s: Slots) => string> = [
  (s) => `My ${s.rel} ${s.name} moved to ${s.place} ${s.when}.`,
  (s) => `I've been really into ${s.act} lately, mostly ${s.when}.`,
  (s) => `Can you suggest a good recipe for ${s.food}? ${s.name} is coming over.`,
  (s) => `We named our new puppy ${s.rare}, she loves the ${s.thing}.`,
  (s) => `I bought a used ${s.thing} from a shop called ${s.rare} in ${s.place}.`,
  (s) => `${s.name} and I went ${s.act} near ${s.place} ${s.when}, it rained the whole time.`,
  (s) => `Remind me that the ${s.thing} warranty code is ${s.rare}-${s.num}.`,
  (s) => `I'm allergic to peanuts, so no ${s.food} with satay sauce for me.`,
  (s) => `My ${s.rel} works at ${s.rare} as a nurse and hates night shifts.`,
  (s) => `We are planning a trip to ${s.place} ${s.when} to try the local ${s.food}.`,
  (s) => `I started ${s.act} classes with ${s.name}; the teacher is called ${s.rare}.`,
  (s) => `The ${s.thing} broke again ${s.when}, I think I need a new one.`,
  (s) => `Our flat on ${s.rare} street has a tiny ${s.thing} but great light.`,
  (s) => `I ran ${s.num} kilometres ${s.when} and my knee still hurts.`,
  (s) => `What should I pack for ${s.act} in ${s.place}?`,
  (s) => `${s.name}'s birthday is on the ${s.num % 28 + 1}th, she likes ${s.food} and ${s.act}.`,
];
const ASSISTANT: Array<(s: Slots) => string> = [
  (s) => `That sounds lovely! ${s.place} is great for ${s.act}, especially ${s.when}.`,
  (s) => `For ${s.food}, start with fresh ingredients and give yourself about an hour.`,
  (s) => `I'll remember that ${s.name} is your ${s.rel}. Anything else about ${s.place}?`,
  (s) => `A good ${s.thing} doesn't have to be expensive; compare a few shops first.`,
  (s) => `Sorry to hear about your knee. Rest, ice, and maybe skip ${s.act} for a few days.`,
  (s) => `Noted: the code ${s.rare}-${s.num} is for your ${s.thing}.`,
  (s) => `${s.rare} is a lovely name! How is ${s.name} getting along with the puppy?`,
  (s) => `If you go to ${s.place} ${s.when}, book early; it gets busy.`,
];

interface Slots {
  name: string;
  place: string;
  act: string;
  food: string;
  thing: string;
  rel: string;
  when: string;
  rare: string;
  num: number;
}

export class ChatText {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** uniform in [0, 1), mulberry32 */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  /** a made-up word from a Zipf-like pool of ~40k: most rare, a few common */
  private rare(): string {
    const rank = Math.floor(Math.exp(this.next() * Math.log(40_000)));
    let w = '';
    for (let x = rank * 2654435761, i = 0; i < 3; i++, x = Math.floor(x / SYLLABLES.length)) w += SYLLABLES[x % SYLLABLES.length];
    return w[0]!.toUpperCase() + w.slice(1);
  }

  private slots(): Slots {
    return {
      name: this.pick(NAMES),
      place: this.pick(PLACES),
      act: this.pick(ACTIVITIES),
      food: this.pick(FOODS),
      thing: this.pick(THINGS),
      rel: this.pick(RELATIONS),
      when: this.pick(WHEN),
      rare: this.rare(),
      num: 1 + Math.floor(this.next() * 90),
    };
  }

  /** the text of turn `i` of a conversation (even: user, odd: assistant) */
  turn(i: number): { role: 'user' | 'assistant'; content: string } {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    return { role, content: this.pick(role === 'user' ? USER : ASSISTANT)(this.slots()) };
  }

  /** a question as a user would ask it later, about things turns mention */
  query(): string {
    const s = this.slots();
    return this.pick([
      `Where did my ${s.rel} move to?`,
      `What did I say about ${s.act} with ${s.name}?`,
      `Which recipe for ${s.food} did you suggest?`,
      `What is the warranty code of my ${s.thing}?`,
      `When are we going to ${s.place}?`,
      `What is the name of our puppy?`,
      `What does ${s.name} like for her birthday?`,
      `Tell me about the ${s.thing} I bought in ${s.place}`,
    ]);
  }
}
