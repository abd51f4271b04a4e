import type { RetrievalResult } from '../domain/entry.js';
import { quoted } from './passage.js';
import { mentionedDate } from './time-range.js';

const HEADINGS = {
  short_term: 'Recent conversation (this session)',
  long_term: 'Long-term memories',
  semantic: 'Related earlier conversation',
} as const;

function line(r: RetrievalResult, replacing: ReadonlySet<string>): string {
  const who = r.name ? `${r.role} ${r.name}` : r.role;
  const kind = r.kind === 'turn' ? '' : ` ${r.kind}`;
  return `- [${r.created_at.slice(0, 10)}${kind}${status(r, replacing)}${whenMentioned(r)}] ${who}: ${quoted(r.content, r.passage).replace(/\s*\n\s*/g, ' ')}`;
}

/** `, "yesterday" = 2023-05-07` when the memory dates its event relative to when it was said. */
export function whenMentioned(r: RetrievalResult): string {
  if (r.kind !== 'turn') return '';
  const m = mentionedDate(r.content, r.created_at);
  if (!m) return '';
  return `, "${m.text.replace(/"/g, '')}" = ${m.from === m.to ? m.from : `${m.from} to ${m.to}`}`;
}

/** Updated facts reach the model as updated: the older line says it was replaced, and when. */
export function status(r: RetrievalResult, replacing: ReadonlySet<string>): string {
  if (r.explain.superseded_by) return `, earlier: replaced${r.explain.superseded_at ? ` on ${r.explain.superseded_at.slice(0, 10)}` : ''}`;
  return replacing.has(r.id) ? ', latest: replaces an earlier memory' : '';
}

/** ids of results that replace another result */
export function replacingIds(results: readonly RetrievalResult[]): Set<string> {
  return new Set(results.map((r) => r.explain.superseded_by).filter((id): id is string => id !== null));
}

/**
 * Serializes retrieval results into the text the chat pipeline prepends to the LLM call: one block per
 * tier, best result first within each, an empty string when nothing was retrieved. Results whose
 * relevance (`explain.relevance`, 0–1) is below `minRelevance` stay out of the text, not out of the
 * results: a model reads every line it is given as something it remembers, so a line that does not
 * bear on the question ("assistant: Noted!") is noise it may act on (config prompt_min_relevance).
 */
export function formatPromptBlocks(all: readonly RetrievalResult[], minRelevance = 0): string {
  const results = all.filter((r) => r.explain.relevance >= minRelevance);
  if (results.length === 0) return '';
  const replacing = replacingIds(results);
  const blocks: string[] = [];
  for (const tier of ['short_term', 'long_term', 'semantic'] as const) {
    const rs = results.filter((r) => r.tier === tier);
    if (rs.length === 0) continue;
    // one memory per line: newlines collapse, so a memory cannot forge a heading of its own
    blocks.push(`### ${HEADINGS[tier]}\n${rs.map((r) => line(r, replacing)).join('\n')}`);
  }
  return `## Memory\nWhat you remember about this user, most relevant first. Use it when it helps; do not invent beyond it.\n\n${blocks.join('\n\n')}\n`;
}
