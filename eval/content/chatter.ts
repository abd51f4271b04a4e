/** Filler conversation, weekend reports and the assistant's question/answer exchanges. */

/** An assistant question answered by a short user reply: the question words and the answer live in two turns. */
export interface AskedFact {
  key: string;
  values: readonly string[];
  ask: string;
  /** how the user answers: some formal, some typed in a hurry (lower case, a word or two) */
  answers: ReadonlyArray<(v: string) => string>;
  questions: readonly string[];
  /** turns on the same topic that do not answer it */
  distractors: readonly string[];
}

export const ASKED_FACTS: readonly AskedFact[] = [
  {
    key: 'dentist',
    values: ['Dr. Lindqvist', 'Dr. Okafor', 'Dr. Marchetti', 'Dr. Novak', 'Dr. Abiodun'],
    ask: 'By the way, which dentist do you go to? I can add the appointment to your calendar.',
    answers: [(v) => `${v}, over on Harbour Street.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['I really should book a dentist check-up for my partner too.', 'Is whitening toothpaste bad for your enamel?'],
    questions: ['Which dentist do I go to?', 'Who is my dentist?'],
  },
  {
    key: 'flight',
    values: ['7:40 in the morning', '6:15 am', 'half past noon', '10:50 at night'],
    ask: 'What time does your flight leave on Friday?',
    answers: [(v) => `${v}, ugh.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['Flight prices are ridiculous this summer.', 'Do you know any tricks for sleeping on a flight?'],
    questions: ['What time does my flight leave on Friday?', 'When does my Friday flight leave?'],
  },
  {
    key: 'hotel',
    values: ['The Marlowe', 'Hotel Astra', 'The Linden House', 'Casa Verde'],
    ask: 'Which hotel did you end up booking for the conference?',
    answers: [(v) => `${v}, right by the venue.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['Is it cheaper to book a hotel last minute?', 'The conference agenda is out and it is packed.'],
    questions: ['Which hotel did I book for the conference?', 'Where am I staying for the conference?'],
  },
  {
    key: 'shoe_size',
    values: ['Ten and a half', 'EU 42', 'Size 8', 'Nine'],
    ask: 'What shoe size should I look for in the running sale?',
    answers: [(v) => `${v}, wide fit if they have it.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['My old running shoes are falling apart.', 'What size suitcase counts as hand luggage?'],
    questions: ['What is my shoe size?', 'Which shoe size do I wear?'],
  },
  {
    key: 'gp',
    values: ['Dr. Haddad', 'Dr. Petrov', 'Dr. Whitlock', 'Dr. Saarinen'],
    ask: "Who's your GP, so I can draft the referral email?",
    answers: [(v) => `${v} at the Northside practice.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['Is a GP appointment needed for a flu jab?', 'Can you draft an email to my team about the new rota?'],
    questions: ['Who is my GP?', 'Which GP should the referral email go to?'],
  },
  {
    key: 'landlord',
    values: ['Mr. Ferreira', 'Mrs. Abernathy', 'Tomasz Wolny', 'Gail Pritchard'],
    ask: "What's your landlord's name, for the letter about the heater?",
    answers: [(v) => `${v}. Lovely but slow.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['My friend\'s landlord just raised her rent again.', 'The heater is making a clicking noise again.'],
    questions: ["What is my landlord's name?", 'Who is my landlord?'],
  },
  {
    key: 'gym',
    values: ['Ironworks', 'Pulse Fitness', 'The Foundry', 'Summit Climbing'],
    ask: 'Which gym are you a member of? I can check their class times.',
    answers: [(v) => `${v}, the one by the station.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['The gym was packed today, January crowd.', 'Are gym memberships ever worth it?'],
    questions: ['Which gym am I a member of?', 'What gym do I belong to?'],
  },
  {
    key: 'plumber',
    values: ['Kowalski Plumbing', 'a guy called Dev', 'Rapid Pipes', 'Eddie from next door'],
    ask: 'Did you find a plumber for the leak in the end? Who is doing it?',
    answers: [(v) => `${v}, coming Tuesday.`, (v) => v.toLowerCase().replace(/\.$/, '')],
    distractors: ['How do I fix a dripping tap myself?', 'The leak under the sink is getting worse.'],
    questions: ['Which plumber is fixing the leak?', 'Who did I find to fix the leak?'],
  },
];

/** Weekend reports: what the user did, told in the past tense. `{place}` is filled per user. */
export const ACTIVITIES: readonly string[] = [
  'Spent Saturday kayaking on Lake {place}, my arms are dead.',
  'We drove up into the hills and hiked to a waterfall, worth every blister.',
  'Finally repainted the spare bedroom, a sort of sage green.',
  'Took a pottery class on Sunday and made a very lopsided bowl.',
  "Went to my cousin's wedding in {place}, danced until two in the morning.",
  'Ran a 10k fun run for the food bank this weekend.',
  'Did a day trip to {place} and ate far too many pastries.',
  'Volunteered at the community garden planting tomatoes all morning.',
  'Built a bookshelf from scratch, only one screw left over.',
  'Went camping by the river with friends, barely slept but loved it.',
  'Saw a jazz trio at the Blue Door, the drummer was unreal.',
  'Spent the whole weekend at a board game café with the usual crew.',
  'Helped my parents clear out their garage, my back is wrecked.',
  'Went sailing for the first time and got spectacularly seasick.',
  'Did a sourdough workshop and came home with a starter called Gerald.',
  "Visited the science museum's new space exhibit, the planetarium show was great.",
  'Tried indoor skydiving, terrifying and brilliant.',
  'Went strawberry picking and turned the whole haul into jam.',
  'Took the coastal train to {place} and spent the day on the beach.',
  'Ran my first trail race, finished right in the middle of the pack.',
  'Learned to make dumplings at a cooking class, folded about a hundred.',
  'Went to an escape room with work friends and escaped with two minutes left.',
  'Cycled the old railway path all the way to {place} and back.',
  'Spent Sunday at the flea market and came home with a brass lamp.',
  'Went ice skating for the first time in years, only fell twice.',
  'Hosted a dinner party for eight, the paella was a triumph.',
  'Went birdwatching at the marshes and finally saw a heron up close.',
  'Did a silent meditation retreat, harder than it sounds.',
  'Went to a glassblowing demo and made a wonky paperweight.',
  'Spent the day at a music festival in {place}, my ears are still ringing.',
  'Climbed the old lighthouse in {place}, three hundred steps.',
  'Watched the regional rowing finals from the riverbank, what a finish.',
];

export const PLACES = ['Dillon', 'Galway', 'Sintra', 'Whitby', 'Annecy', 'Hallstatt', 'Brighton', 'Cadaqués', 'Ostend', 'Tofino', 'Bled', 'Kotor'];

export const ACTIVITY_REACTIONS = [
  'That sounds like a great weekend!',
  'Love that. Did you take any photos?',
  'Sounds exhausting but fun.',
  'What a nice way to spend the time.',
  'Amazing, you deserved a break.',
  'Ha, that is a story worth telling.',
];

export const GREETINGS_USER: ReadonlyArray<(assistant: string) => string> = [
  (a) => `hey ${a}`,
  (a) => `morning ${a}!`,
  () => 'hi again',
  (a) => `evening ${a}, quick one`,
  () => 'hello!',
];

export const GREETINGS_ASSISTANT: ReadonlyArray<(user: string) => string> = [
  (u) => `Hi ${u}! What's on your mind?`,
  (u) => `Good to see you, ${u}. How can I help?`,
  () => 'Hey! How are things?',
  () => 'Hello! Ready when you are.',
];

export const CLOSINGS_USER = ['thanks, that is all for now', 'ok bye!', 'gotta run, thanks', 'night!', 'perfect, talk later'];
export const CLOSINGS_ASSISTANT = ['Anytime, take care!', 'Talk soon!', 'Have a good one.', 'Bye for now!'];

export const ACKS_USER = ['ok thanks', 'thanks!', 'perfect', 'haha', 'got it', 'sounds good', 'great, thank you', 'cool', 'lol', 'nice', 'yes', 'hmm'];

/** User small talk and requests (no personal facts). */
export const SMALLTALK_USER = [
  'ugh, Mondays.',
  'what should I make for dinner tonight?',
  'can you help me write a polite email declining a meeting?',
  'the weather is finally nice today',
  'I slept terribly last night',
  'any podcast recommendations?',
  'remind me to call the bank tomorrow',
  "I can't decide between two sofas, help",
  'how long should I boil an egg for a jammy yolk?',
  'what is a good stretch for lower back pain?',
  'just finished a huge spreadsheet, brain is mush',
  'is it normal for houseplants to drop leaves in winter?',
  'give me a fun fact',
  'how do I get red wine out of a carpet?',
  'thinking about repainting the kitchen',
  'what are some easy lunch ideas?',
  'I keep forgetting to drink water',
  'can you summarize the pros and cons of renting vs buying?',
  'what is a good name for a pub quiz team?',
  'help me plan a lazy Sunday',
  'I need a packing list for a weekend away',
  'how do I politely ask a neighbour to turn the music down?',
  'what should I watch tonight?',
  'any tips for falling asleep faster?',
  'I burnt the toast again',
  'do you know any good riddles?',
  'what is the difference between baking soda and baking powder?',
  'I want to start journaling, where do I begin?',
  'traffic was awful this morning',
  'my phone screen cracked this morning',
  'can you explain how compound interest works?',
  'what is a polite way to leave a group chat?',
  'why do cats knock things off tables?',
  'I have three deadlines on Friday, help me prioritise',
  'write me a haiku about rain',
  'should I get a standing desk?',
  'how many cups are in a litre?',
  'convert 350 fahrenheit to celsius please',
  'is it worth learning to touch type?',
  'what is a good gift for someone who has everything?',
  'I feel like rearranging the living room',
  'suggest a board game for four people',
  'what goes well with leftover rice?',
  'my houseplant has tiny flies, what do I do?',
  'I need a motivational quote, today is long',
];

const ASSISTANT_OPENERS = ['Happy to help.', 'Good question!', 'Sure thing.', 'Oh no, sorry to hear that.', 'Here is an idea:', 'Let me think.', 'Of course.', 'Ah, classic.'];

const ASSISTANT_ADVICE = [
  'Try breaking it into three small steps and start with the easiest one.',
  'A short walk and a glass of water often help more than you would expect.',
  'You could batch the small tasks into one thirty-minute block.',
  'Keep it simple: one pan, a few vegetables, something crunchy on top.',
  'Most people find a short list easier to stick to than a long one.',
  'If it still bothers you tomorrow, it is worth a second look.',
  'A gentle, friendly tone usually gets the best response.',
  'Set a timer for twenty minutes and see how far you get.',
  'Write the first sentence badly on purpose; editing is easier than starting.',
  'Check the label first, then test a small hidden patch.',
  'Ten minutes of stretching before bed can make a real difference.',
  'The cheaper option is fine unless you use it every single day.',
  'Consider what you will still care about in a week.',
  'Open a window, tidy one surface, then decide.',
  'Pick the one that you would be happiest to explain to a friend.',
  'Lists with verbs at the front are easier to act on.',
  'Leftovers often taste better with something fresh and sour added.',
  'You can always revisit the decision after a trial month.',
  'Warm light in the evening helps most people wind down.',
  'A polite note with a specific request tends to work well.',
  'If you can, sleep on it and decide in the morning.',
  'Start with what is due first, then what is quickest.',
  'A pinch of salt and a squeeze of lemon rescue most leftovers.',
  'Put the phone in another room for the first hour.',
  'Two options side by side on paper usually make the choice obvious.',
  'Keep a glass of water on your desk as a reminder.',
  'Ask one clear question and give them an easy way to say yes.',
  'Do the boring part first, the rest will feel like a reward.',
  'A quick stretch every hour helps more than one long session.',
  'Blot, do not rub, and use cold water.',
  'Most plants prefer a little less water in the darker months.',
  'Try the library app first, it is free and surprisingly good.',
  'Write down three things and stop there.',
  'Five minutes of tidying before bed makes mornings calmer.',
  'Choose the option with the fewest moving parts.',
  'Batch cooking on Sunday saves a lot of weeknight stress.',
  'A warm shower an hour before bed can help you drift off.',
  'Keep the message short, friendly and specific.',
  'Give it a week before you judge it.',
  'A checklist on the door helps you remember on the way out.',
];

/** A helpful assistant reply: an opener and one or two pieces of generic advice. */
export function assistantReply(pick: <T>(xs: readonly T[]) => T, two: boolean): string {
  const first = pick(ASSISTANT_ADVICE);
  let second = pick(ASSISTANT_ADVICE);
  if (second === first) second = '';
  return [pick(ASSISTANT_OPENERS), first, two ? second : ''].filter(Boolean).join(' ');
}
