import { createHash } from 'node:crypto';

/**
 * The content hash that deduplicates across tiers: whitespace-collapsed, case-folded text, so the same
 * sentence written twice (or held by two tiers) is one memory.
 */
export function contentHash(content: string): string {
  const normalized = content.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();
  return createHash('sha256').update(normalized).digest('hex').slice(0, 32);
}

export function shortHash(value: string, length = 24): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, length);
}
