import { SUMMARY_HEADING, type Summarizer } from '../compaction/summarizers/summarizer.js';
import type { Kind } from '../domain/entry.js';
import { storableGenerated, type Role, type Turn } from '../domain/turn.js';

/** The first line of every archive's text (the archiver writes it; a later archive strips it to fold the text in). */
export const ARCHIVE_HEADING = 'Archived conversation';

/** One thing an archive condenses: a turn, an entry, or the session's earlier archive. */
export interface ArchiveItem {
  id: string;
  role: Role;
  name: string | null;
  kind: Kind;
  content: string;
  created_at: string;
  importance: number;
}

/** Writes the text of an archive; the compaction summarizers (LLM, else extractive) behind one seam. */
export interface ArchiveSummarizer {
  summarize(items: readonly ArchiveItem[], session: { user_id: string; session_id: string }): Promise<{ text: string; summarizer: string }>;
}

/**
 * Archives are written by the same summarizers as compaction (the LLM, else the extractive one):
 * summaries and an earlier archive go in as summary turns, which both summarizers fold into the new
 * text rather than quote as speech. The summarizer's own heading is dropped: the archive has its own.
 */
export function archiveSummarizer(summarizer: Summarizer, maxTokens: number, maxChars = 32_000): ArchiveSummarizer {
  return {
    async summarize(items, session) {
      const turns = items.map((x) => toTurn(x, session));
      const out = await summarizer.summarize({ turns, maxTokens });
      const lines = out.text.trim().split('\n');
      if (lines[0]?.startsWith(SUMMARY_HEADING)) lines.shift();
      // an LLM's text is held to what a client may send (throws when nothing storable is left)
      const text = storableGenerated(lines.join('\n'), maxChars);
      return { text, summarizer: out.by };
    },
  };
}

function toTurn(x: ArchiveItem, session: { user_id: string; session_id: string }): Turn {
  const folded = x.kind !== 'turn';
  const content = x.kind === 'archive' ? x.content.split('\n').filter((l) => !l.startsWith(ARCHIVE_HEADING)).join('\n') : x.content;
  return {
    id: x.id,
    user_id: session.user_id,
    session_id: session.session_id,
    role: x.role,
    name: x.name,
    content,
    content_hash: '',
    created_at: x.created_at,
    importance: x.importance,
    pinned: false,
    metadata: folded ? { kind: 'summary' } : null,
  };
}
