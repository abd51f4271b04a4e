import type { Config } from '../../config/schema.js';
import { LlmUnavailableError } from '../../errors.js';
import type { LlmProvider } from '../../ports/llm.js';
import type { Logger } from '../../logger.js';
import type { TokenCounter } from '../tokens.js';
import { ExtractiveSummarizer } from './extractive.js';
import { LlmSummarizer } from './llm.js';
import type { Summarizer, SummaryInput, SummaryOutput } from './summarizer.js';

/**
 * Tries the primary summarizer (the LLM) and, when it fails for any reason, the fallback (extractive),
 * so a compaction always gets a summary. Each fallback is logged and counted.
 */
export class FallbackSummarizer implements Summarizer {
  readonly id: string;
  /** how many summaries the fallback wrote because the primary failed */
  fallbacks = 0;

  constructor(
    private readonly primary: Summarizer,
    private readonly fallback: Summarizer,
    private readonly log: Logger,
  ) {
    this.id = `${primary.id}, else ${fallback.id}`;
  }

  async summarize(input: SummaryInput): Promise<SummaryOutput> {
    try {
      return await this.primary.summarize(input);
    } catch (err) {
      this.fallbacks++;
      this.log.warn({ err: (err as Error).message, summarizer: this.primary.id, fallback: this.fallback.id }, 'summarizer failed; using the fallback');
      return this.fallback.summarize(input);
    }
  }
}

/** For `compaction_summarizer = "llm"` with no LLM configured: every compaction fails, loudly. */
class MissingLlmSummarizer implements Summarizer {
  readonly id = 'llm:none';
  async summarize(): Promise<SummaryOutput> {
    throw new LlmUnavailableError('compaction_summarizer = "llm" but no LLM is configured (llm_provider or privacy_mode)', 'not_configured');
  }
}

/**
 * The summarizer compaction uses, from `compaction_summarizer`: "auto" (default) the LLM with the
 * extractive fallback, or the extractive one alone when no LLM is configured; "extractive" never
 * calls the LLM; "llm" never falls back (a failed call fails the job, which the queue retries).
 */
export function createSummarizer(config: Config, llm: LlmProvider | null, tokens: TokenCounter, log: Logger): Summarizer {
  const extractive = new ExtractiveSummarizer(tokens);
  if (config.compaction_summarizer === 'extractive') return extractive;
  if (!llm) {
    if (config.compaction_summarizer === 'llm') {
      log.warn('compaction_summarizer = "llm" but no LLM is configured: compactions will fail');
      return new MissingLlmSummarizer();
    }
    return extractive;
  }
  // the transcript must leave room in the model's window for the instructions and the summary
  const inputBudgetTokens = Math.max(256, config.context_window - config.summary_max_tokens - 256);
  const viaLlm = new LlmSummarizer(llm, tokens, { inputBudgetTokens });
  return config.compaction_summarizer === 'llm' ? viaLlm : new FallbackSummarizer(viaLlm, extractive, log);
}
