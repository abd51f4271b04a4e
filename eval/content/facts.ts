/**
 * What users say about themselves. Each slot holds several phrasings of the statement, questions that
 * share a word with some phrasing (lexical recall), paraphrased questions that share none with some
 * phrasing (the generator checks which pairs qualify), an update form for facts that change, and
 * distractors: turns on the same topic that do not hold the fact.
 */
export interface FactSlot {
  key: string;
  values: readonly string[];
  statements: ReadonlyArray<(v: string) => string>;
  questions: readonly string[];
  paraphrases: readonly string[];
  update?: {
    statements: ReadonlyArray<(v: string, old: string) => string>;
    questions: readonly string[];
  };
  distractors: readonly string[];
  /** what the assistant says after hearing the fact (never repeats the value) */
  acks: readonly string[];
}

export const FACT_SLOTS: readonly FactSlot[] = [
  {
    key: 'home_city',
    values: ['Denver', 'Lisbon', 'Austin', 'Toronto', 'Leeds', 'Porto', 'Melbourne', 'Seattle', 'Lyon', 'Osaka', 'Tucson', 'Bergen', 'Valencia', 'Halifax', 'Ghent', 'Wellington', 'Boulder', 'Krakow'],
    statements: [
      (v) => `I live in ${v}, moved here about three years ago for the light and the food.`,
      (v) => `We live in ${v} now, in a small flat near the river.`,
      (v) => `I've lived in ${v} since college and honestly can't imagine leaving.`,
    ],
    questions: ['Which city do I live in?', 'Where do I live?', 'What city have I been living in?'],
    paraphrases: ['Where is my home base?', 'Which town do I reside in?'],
    update: {
      statements: [
        (v, old) => `Big news: we moved to ${v}! Leaving ${old} was hard but I live near the coast now.`,
        (v) => `Settled in ${v} at last, I live five minutes from the new office now.`,
        (v) => `Officially a resident of ${v} as of this week, the boxes are still everywhere but we live here now.`,
      ],
      questions: ['Where do I live now?', 'Which city do I live in these days?', 'What city am I living in at the moment?'],
    },
    distractors: [
      'I could never live somewhere without good coffee.',
      'Is it expensive to live downtown in most cities?',
      'The city was so loud last night, fireworks until 2am.',
      'My friend keeps telling me to visit her city in the winter.', 'Which city has the best food scene in Europe, in your opinion?', 'I watched a documentary about people who live on boats.', 'The living room needs new curtains, any colour ideas?',
    ],
    acks: ['That sounds like a lovely place to be.', 'Good to know where you are, thanks.', 'Noted! Local tips will be easier now.'],
  },
  {
    key: 'job',
    values: [
      "a nurse at St. Brigid's Hospital", 'a data analyst at Finch Labs', 'a high-school chemistry teacher', 'a sous-chef at a bistro called Marrow',
      'a structural engineer at Holm & Partners', 'a product designer at Tessellate', 'a paramedic with the county ambulance service',
      'an accountant at Brightwater Credit Union', 'a UX researcher at Lumen Health', 'a carpenter with my own workshop',
      'a pharmacist at the Greenway clinic', 'a translator for a legal firm', 'a park ranger at Redrock State Park', 'a sound engineer at Bluebird Studios',
    ],
    statements: [
      (v) => `I work as ${v}, which keeps me busy most weeks.`,
      (v) => `For context, I'm ${v}, so my schedule is all over the place.`,
      (v) => `My job? I'm ${v}. Been doing it for six years.`,
    ],
    questions: ['What do I do for work?', 'What is my job?', 'Where do I work?'],
    paraphrases: ['How do I earn my living?', 'What is my profession?', 'What line of employment am I in?'],
    update: {
      statements: [
        (v) => `Quick update: I quit and started a new job, I'm ${v} now.`,
        (v) => `New chapter, I work as ${v} as of this month.`,
        (v, old) => `Handed in my notice as ${old}. Starting Monday my job is ${v}!`,
      ],
      questions: ['What is my job now?', 'Where do I work these days?', 'What do I do for work now?'],
    },
    distractors: [
      'Work was brutal today, three meetings back to back.',
      'I need a vacation from work, seriously.',
      'Do you think a four-day work week will ever catch on?',
      'My job fair volunteer shift got cancelled, so I have a free afternoon.', 'Can you help me write a job description for a volunteer role?', 'I keep checking work emails on weekends, bad habit.', 'What is a good way to ask for feedback at work?',
    ],
    acks: ['That sounds demanding but rewarding.', 'Thanks, that helps me plan around your schedule.', 'Good to know!'],
  },
  {
    key: 'dog',
    values: ['Biscuit the beagle', 'Pepper the greyhound', 'Mochi the corgi', 'Ziggy the labrador', 'Olive the border collie', 'Tofu the dachshund', 'Waffles the whippet', 'Pickle the shiba inu', 'Bruno the boxer', 'Nala the spaniel'],
    statements: [
      (v) => `Our dog is ${v} and she absolutely runs the house.`,
      (v) => `We adopted ${v} from the shelter last spring, best decision ever.`,
      (v) => `${v} chewed through another dog bed today, unbelievable.`,
    ],
    questions: ["What's my dog called?", 'What is the name of my dog?', 'What breed is my dog?'],
    paraphrases: ['What do I call my pup?', 'Who is my four-legged companion?'],
    distractors: ["The neighbour's dog barked all night again.", 'Can dogs eat blueberries?', 'Saw the cutest dog at the park today, a tiny fluffy thing.', 'Which dog breeds are good with small kids? My friend is asking.', 'Name ideas for a goldfish? My nephew won one at the fair.', 'What do you call a group of crows? Asking for a quiz.'],
    acks: ['Sounds like a character!', 'Animals make a home, honestly.', 'Ha, give them a scratch from me.'],
  },
  {
    key: 'allergy',
    values: ['peanuts', 'shellfish', 'penicillin', 'cats', 'sesame', 'kiwi and hazelnuts', 'bee stings', 'latex'],
    statements: [
      (v) => `Heads up, I'm allergic to ${v}. Learned that in a hospital waiting room years ago.`,
      (v) => `I found out the hard way that I'm allergic to ${v}.`,
      (v) => `Remember: ${v}, a total no-go for me, I carry an EpiPen because of it.`,
    ],
    questions: ['What am I allergic to?', 'Do I have any allergies?', 'What should I avoid because of my allergy?'],
    paraphrases: ['Which things trigger a bad reaction in my body?'],
    distractors: ['Pollen season is brutal this year, my eyes are so itchy.', 'Are allergy tests expensive?', 'My coworker had an allergic reaction at lunch, scary stuff.', 'What is the difference between an intolerance and an allergy?', 'I try to avoid sugar after 8pm, mostly fail.'],
    acks: ["I'll keep that in mind for any suggestions.", 'Thanks for telling me, that is important.', 'Noted, I will be careful with that.'],
  },
  {
    key: 'car',
    values: ['a blue Mazda 3', 'a green Subaru Outback', 'a white Toyota Prius', 'a red Fiat 500', 'a grey Volvo V60', 'a black Honda Civic', 'an old Ford Transit van', 'a silver Kia Niro'],
    statements: [
      (v) => `I drive ${v}, nothing fancy but it's reliable.`,
      (v) => `My car is ${v}, ten years old and still going.`,
      (v) => `Took ${v} in for its MOT, passed first time.`,
    ],
    questions: ['What car do I drive?', 'What kind of car do I have?'],
    paraphrases: ['Which vehicle do I own?'],
    update: {
      statements: [
        (v) => `Finally sold my old car, I drive ${v} now.`,
        (v, old) => `Traded in ${old}; my car is now ${v}.`,
        (v) => `Picked up ${v} from the dealer this morning, it's my car now and I love it.`,
      ],
      questions: ['What car do I drive now?', 'What is my current car?'],
    },
    distractors: ['Traffic on the ring road was a nightmare this morning.', 'My car needs new tyres before winter.', 'How often should I change the oil in a car?', 'What kind of music is good for a long drive?', 'Can you explain how electric car charging works?', 'I hate driving in the rain at night.'],
    acks: ['Reliable is what matters.', 'Good to know for road trip planning.', 'Nice!'],
  },
  {
    key: 'favourite_dish',
    values: ['mushroom risotto', 'pad see ew', 'shakshuka', 'lamb tagine', 'pierogi', 'bibimbap', 'cacio e pepe', 'chana masala', 'fish tacos', 'tonkotsu ramen'],
    statements: [
      (v) => `My favourite dish is ${v}, I could eat it every day.`,
      (v) => `If I had to pick one meal forever, it'd be ${v}.`,
      (v) => `Nothing beats ${v}, it's my all-time favourite food.`,
    ],
    questions: ["What's my favourite dish?", 'What is my favourite food?', 'Which meal would I pick forever?'],
    paraphrases: ['What do I most enjoy eating?', 'Which recipe could I happily have for dinner every night?'],
    update: {
      statements: [
        (v) => `These days my favourite food is ${v}, it has replaced the old one completely.`,
        (v) => `New favourite dish alert: ${v}. I've made it four times this month.`,
      ],
      questions: ["What's my favourite food now?", 'What is my favourite dish these days?'],
    },
    distractors: ['What should I cook tonight? Something quick.', 'I ate way too much food at the work party.', 'Is it weird to have a favourite spoon?', 'Who washes the dishes is a constant debate in our house.', 'What is a good meal prep plan for a busy week?', 'My favourite podcast just ended, so sad.'],
    acks: ['Great choice!', 'Now I am hungry.', 'I will remember that for recipe ideas.'],
  },
  {
    key: 'instrument',
    values: ['cello', 'ukulele', 'piano', 'drums', 'trumpet', 'banjo', 'violin', 'saxophone'],
    statements: [
      (v) => `I've been learning the ${v} for about a year, slowly.`,
      (v) => `Started ${v} lessons on Thursdays, my neighbours are very patient.`,
    ],
    questions: ['Which instrument am I learning?', 'What lessons do I take on Thursdays?'],
    paraphrases: ['What music do I practise?'],
    distractors: ['Went to a concert last night, the opening band was great.', 'Any tips for staying motivated when learning something new?', 'Thursdays are always my busiest day.', 'My nephew wants to learn an instrument, which is easiest?', 'What lessons do you think everyone should learn by thirty?'],
    acks: ['That takes patience, well done.', 'Keep at it!', 'Lovely, music is good for the soul.'],
  },
  {
    key: 'birthday',
    values: ['March 3rd', 'July 19th', 'October 8th', 'January 27th', 'May 14th', 'September 30th', 'December 2nd', 'August 11th'],
    statements: [
      (v) => `My birthday is on ${v}, in case you need it for anything.`,
      (v) => `I was born on ${v}, and yes, I plan my own party every year.`,
    ],
    questions: ['When is my birthday?', 'What date was I born?'],
    paraphrases: ['On which day do I celebrate getting older?'],
    distractors: ['Need a birthday gift idea for a coworker, any thoughts?', 'I hate singing happy birthday at the office.', 'Is it weird to celebrate a half birthday?', 'What is the date of the next long weekend?'],
    acks: ['Noted, I will remember it.', 'Good to know!', 'A date worth remembering.'],
  },
  {
    key: 'exercise',
    values: ['climbing at the bouldering gym', 'swimming laps', 'five-a-side football', 'yoga', 'cycling', 'tennis', 'rowing', 'Brazilian jiu-jitsu'],
    statements: [
      (v) => `I do ${v} every Tuesday and Saturday to stay sane.`,
      (v) => `My exercise routine is mostly ${v}, three times a week.`,
    ],
    questions: ['What exercise do I do?', 'What is my exercise routine?'],
    paraphrases: ['Which physical activity keeps me fit?'],
    update: {
      statements: [
        (v) => `Switched things up: I quit the old routine and my exercise now is ${v}.`,
        (v) => `New routine, I do ${v} now, my knee needed a change.`,
      ],
      questions: ['What exercise do I do now?', 'What is my routine now?'],
    },
    distractors: ['I should really exercise more, I sit all day.', 'Is it bad to exercise right after eating?', 'My morning routine is a mess lately.', 'Can you suggest a stretching routine for desk workers?'],
    acks: ['Good for you!', 'Consistency is everything.', 'That sounds like a solid routine.'],
  },
  {
    key: 'laptop',
    values: ['a ThinkPad X1', 'a 13-inch MacBook Air', 'a Framework laptop', 'a Dell XPS 15', 'a Surface Laptop', 'an old Chromebook'],
    statements: [(v) => `My laptop is ${v}, and the battery is finally dying.`, (v) => `I do everything on ${v}, it's my whole office.`],
    questions: ['What laptop do I use?', 'What do I do everything on?'],
    paraphrases: ['Which computer do I type on?'],
    update: {
      statements: [(v) => `Bought a new laptop: ${v}. The old one gave up.`, (v) => `Switched to ${v} this week, my laptop is fast again.`],
      questions: ['What laptop do I have now?', 'Which laptop do I use now?'],
    },
    distractors: ['My laptop fan sounds like a jet engine.', 'Should I buy a laptop stand for my neck?', 'Which laptop would you recommend for a student on a budget?', 'I use way too many browser tabs.'],
    acks: ['Good to know for troubleshooting.', 'Ah, classic.', 'Got it.'],
  },
  {
    key: 'book',
    values: ['The Left Hand of Darkness by Ursula Le Guin', 'Middlemarch by George Eliot', 'Piranesi by Susanna Clarke', 'The Overstory by Richard Powers', 'Pachinko by Min Jin Lee', 'Stoner by John Williams', 'Circe by Madeline Miller', 'The Remains of the Day by Kazuo Ishiguro'],
    statements: [
      (v) => `I'm reading ${v} at the moment, slow going but lovely.`,
      (v) => `Just started ${v} on the train, hooked already.`,
    ],
    questions: ['What book am I reading?', 'What did I start reading on the train?'],
    paraphrases: ['Which novel is on my nightstand?'],
    update: {
      statements: [(v) => `Finished my last book; now I'm reading ${v}.`, (v) => `Onto a new book: ${v}, reading it every lunch break.`],
      questions: ['What am I reading now?', 'What book am I reading these days?'],
    },
    distractors: ['Any good audiobook recommendations for a long drive?', 'I never finish the books my book club picks.', 'Can you recommend a book for my dad? He likes history.', 'Reading on the train makes me feel sick, sadly.', 'Started a new puzzle, a thousand pieces of pure sky.'],
    acks: ['Great pick.', 'Enjoy it!', 'I have heard good things about that one.'],
  },
  {
    key: 'race',
    values: ['the Berlin marathon', 'a 10k in the spring', 'the Lisbon half marathon', 'a sprint triathlon', 'a 100 km charity bike ride', 'a trail ultra in the Alps'],
    statements: [
      (v) => `I signed up for ${v}, training starts next month.`,
      (v) => `Committed to ${v}! Terrified but excited about the training.`,
    ],
    questions: ['What race did I sign up for?', 'What am I training for?'],
    paraphrases: ['Which athletic event have I entered?'],
    distractors: ['My legs are sore from the stairs at work.', 'Is it better to run in the morning or evening?', 'Did you see the Formula 1 race on Sunday?', 'Should I sign up for a first aid course?', 'My training at work this week is so dull.'],
    acks: ['Exciting! I can help with a plan.', 'You will do great.', 'That is a big goal, well done.'],
  },
  {
    key: 'language',
    values: ['Portuguese', 'Japanese', 'Korean', 'Italian', 'Dutch', 'Greek', 'Turkish', 'Swahili'],
    statements: [
      (v) => `I'm trying to learn ${v} with an app, twenty minutes a day.`,
      (v) => `Practising my ${v}, I have a tutor on Sunday mornings.`,
    ],
    questions: ['Which language am I trying to learn?', 'What do I practise with my tutor?'],
    paraphrases: ['What foreign tongue am I studying?'],
    distractors: ['I wish I had kept up the French I learned at school.', 'Is it true kids learn languages faster?', 'What is the hardest language to learn for English speakers?', 'I am trying to cut down on screen time.', 'My nephew needs a maths tutor, any tips on finding one?'],
    acks: ['Good luck with it!', 'A little every day adds up.', 'Nice, that will open doors.'],
  },
  {
    key: 'coffee',
    values: ['an oat flat white', 'a double espresso', 'a cortado', 'black filter coffee', 'a chai latte', 'an iced americano'],
    statements: [(v) => `My usual coffee order is ${v}.`, (v) => `I always get ${v}, the barista knows me by now.`],
    questions: ['What is my usual coffee order?', 'What do I always get from the barista?'],
    paraphrases: ['What do I drink at the café every morning?'],
    distractors: ['I drank way too much coffee today, I am vibrating.', 'Is decaf coffee worth it?', 'I always forget my reusable cup.', 'What order should I watch the Star Wars films in?', 'Is it rude not to tip the barista?'],
    acks: ['A classic.', 'Good taste.', 'Noted for the next coffee run.'],
  },
];

/** Assistant replies after any statement. */
export const GENERIC_ACKS = [
  'Got it, I will keep that in mind.',
  'Thanks for telling me.',
  'Noted!',
  'That is good to know.',
  'Understood.',
];
