import type { LlmProvider } from '../../ports/llm.js';
import type { TokenCounter } from '../tokens.js';
import { isSummaryTurn, speaker, type Summarizer, type SummaryInput, type SummaryOutput } from './summarizer.js';

export interface LlmSummarizerOptions {
  /** most tokens of transcript one call may carry (the model's window minus the summary and the instructions) */
  inputBudgetTokens: number;
}

const INSTRUCTIONS = `You keep the memory of a conversation between a user and an assistant.
Summarize the transcript you are given for your future self, who will no longer see it.
Keep: names, numbers, dates, places, decisions, commitments, the user's facts and preferences, open questions.
Drop: greetings, thanks, filler, and anything the assistant only repeated.
If the transcript starts with an earlier summary, merge it into yours; never lose its facts.
Write short bullet points ("- "), third person, in the order things happened. Output only the bullets.`;

/** the shortest share of the input budget a turn is cut to, however long the transcript */
const MIN_TOKENS_PER_TURN = 48;

/** Summaries from the configured LLM (through the provider interface, so privacy mode applies). */
export class LlmSummarizer implements Summarizer {
  readonly id: string;

  constructor(
    private readonly llm: LlmProvider,
    private readonly tokens: TokenCounter,
    private readonly options: LlmSummarizerOptions,
  ) {
    this.id = `llm:${llm.name}/${llm.model}`;
  }

  async summarize({ turns, maxTokens }: SummaryInput): Promise<SummaryOutput> {
    const reply = await this.llm.chat(
      [
        { role: 'system', content: `${INSTRUCTIONS}\nStay under ${Math.floor(maxTokens * 0.7)} words.` },
        { role: 'user', content: await this.transcript(turns) },
      ],
      { temperature: 0.2, maxTokens },
    );
    const bullets = reply.content.replace(/^\s*(summary|here is[^\n]*):?\s*\n/i, '').trim();
    return { text: this.tokens.truncate(bullets, maxTokens), by: this.id };
  }

  /**
   * The transcript, one speaker-labelled turn per paragraph. When it would not fit the input budget,
   * every turn is cut to an equal share (an earlier summary is kept whole when it can be), so the
   * call never overflows the model's window that compaction exists to protect. Counted and cut a
   * slice of the event loop at a time (countSoon, truncateSoon): a session holds many turns of up to
   * 32,000 characters, each a tokenizer pass of tens of milliseconds (issue 25: /health waited
   * 100–250 ms on a transcript of two).
   */
  private async transcript(turns: SummaryInput['turns']): Promise<string> {
    const budget = this.options.inputBudgetTokens;
    let total = 0;
    for (const t of turns) total += (await this.tokens.countSoon(t.content)) + 4;
    let share = Infinity;
    let summaryWhole = true;
    if (total > budget) {
      const summaries = turns.filter(isSummaryTurn);
      const summaryTokens = summaries.reduce((n, t) => n + this.tokens.count(t.content), 0);
      summaryWhole = summaryTokens <= budget / 2;
      const fixed = summaryWhole ? summaryTokens : 0;
      const cutTurns = summaryWhole ? turns.length - summaries.length : turns.length;
      share = Math.max(MIN_TOKENS_PER_TURN, Math.floor((budget - fixed) / Math.max(1, cutTurns)) - 4);
    }
    const paragraphs: string[] = [];
    for (const t of turns) {
      const summary = isSummaryTurn(t);
      const text = summary && summaryWhole ? t.content : await this.tokens.truncateSoon(t.content, share);
      paragraphs.push(`${summary ? 'Earlier summary' : speaker(t)}: ${text}${text.length < t.content.length ? ' …' : ''}`);
    }
    return paragraphs.join('\n\n');
  }
}
