import type { RetrievalResult } from '../domain/entry.js';

const HEADINGS = {
  short_term: 'Recent conversation (this session)',
  long_term: 'Long-term memories',
  semantic: 'Related earlier conversation',
} as const;

function line(r: RetrievalResult): string {
  const who = r.name ? `${r.role} ${r.name}` : r.role;
  const kind = r.kind === 'turn' ? '' : ` ${r.kind}`;
  // one memory per line: collapse newlines so a memory cannot forge a heading of its own
  return `- [${r.created_at.slice(0, 10)}${kind}] ${who}: ${r.content.replace(/\s*\n\s*/g, ' ')}`;
}

/**
 * Serializes retrieval results into the text the chat pipeline prepends to the LLM call: one block per
 * tier, best result first within each, an empty string when nothing was retrieved.
 */
export function formatPromptBlocks(results: readonly RetrievalResult[]): string {
  if (results.length === 0) return '';
  const blocks: string[] = [];
  for (const tier of ['short_term', 'long_term', 'semantic'] as const) {
    const rs = results.filter((r) => r.tier === tier);
    if (rs.length === 0) continue;
    blocks.push(`### ${HEADINGS[tier]}\n${rs.map(line).join('\n')}`);
  }
  return `## Memory\nWhat you remember about this user, most relevant first. Use it when it helps; do not invent beyond it.\n\n${blocks.join('\n\n')}\n`;
}
