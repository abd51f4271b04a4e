import { createHash } from 'node:crypto';

/**
 * Qdrant point ids must be unsigned integers or UUIDs, while memory ids are any string and belong to
 * their user. A name-based UUID (RFC 9562 version 5: SHA-1 of a namespace and the name "user NUL id")
 * maps each (user, id) to the same point id every time, on every host, so an upsert replaces its point
 * instead of adding one, and two users' equal ids are two points. The original id travels in the
 * payload (`turn_id`, beside `user_id`), and deletes match those (QdrantVectorIndex.delete), so a
 * point written before ids were scoped (named by the id alone) is still found and deleted with its
 * memory.
 */
const NAMESPACE = Buffer.from('5f0c8d8e7b8a4c4f9a1e6b3d2c1a0f9e', 'hex'); // fixed for this project: never change it

/** passages of a long turn (part ≥ 1) are named in a namespace of their own: no id of any user can name one */
const PASSAGES = Buffer.from('9d2b6c1e4f3a4e7d8b0c5a6f1e2d3c4b', 'hex'); // fixed for this project: never change it

/** the point of (user, id)'s whole text, or with `part` ≥ 1 of its part-th passage */
export function pointId(userId: string, id: string, part = 0): string {
  const hash = createHash('sha1').update(part === 0 ? NAMESPACE : PASSAGES).update(userId, 'utf8').update('\u0000').update(id, 'utf8');
  if (part !== 0) hash.update(`\u0000${part}`);
  const h = hash.digest();
  h[6] = (h[6]! & 0x0f) | 0x50; // version 5
  h[8] = (h[8]! & 0x3f) | 0x80; // RFC variant
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
