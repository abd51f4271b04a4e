import type { Turn } from '../../domain/turn.js';
import { kindOf } from '../../domain/record.js';

export interface SummaryInput {
  /**
   * the turns to summarize, oldest first; the first may be an earlier summary (a turn whose
   * `metadata.kind` is "summary"), which the new summary folds in
   */
  turns: readonly Turn[];
  /** hard cap on the summary's length */
  maxTokens: number;
}

export interface SummaryOutput {
  text: string;
  /** which summarizer wrote it, e.g. "llm:ollama/llama3.2" or "extractive" */
  by: string;
}

/**
 * Turns a stretch of conversation into one summary text — its body (bullets), which the compactor
 * puts under a heading. Contract: resolves with a non-empty text of at most `maxTokens` tokens, or
 * rejects; never changes any store.
 */
export interface Summarizer {
  readonly id: string;
  summarize(input: SummaryInput): Promise<SummaryOutput>;
}

/** how the first line of every summary opens, so a reader (and the next compaction) knows what it is */
export const SUMMARY_HEADING = 'Summary of the earlier conversation';

export function isSummaryTurn(t: Pick<Turn, 'kind' | 'metadata'>): boolean {
  return kindOf(t) === 'summary';
}

/** "user", "user Alice", "assistant" — how a transcript names the speaker of a turn */
export function speaker(t: Pick<Turn, 'role' | 'name'>): string {
  return t.name ? `${t.role} ${t.name}` : t.role;
}
