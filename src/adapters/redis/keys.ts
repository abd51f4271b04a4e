/**
 * Every Redis key this project uses is built here, and nowhere else (BullMQ builds its own keys under
 * `bullPrefix`). User and session ids may hold any character — ':' would break the key layout and
 * '*', '?', '[' would turn a SCAN pattern into a wildcard — so they are percent-encoded first.
 *
 * Layout, with the default prefix `nc`:
 *   nc:st:s:{<user>}:<session>   short-term list of one session (JSON turns, oldest first)
 *   nc:st:u:{<user>}             sorted set: the user's sessions, scored by expiry time (ms)
 *   nc:gone:{<user>}:<id>        hash: the buried texts of one memory ('*': all; else content hashes)
 *   nc:bull:<queue>:…            BullMQ's keys for each queue
 * The braces make the encoded user id the hash tag, so one user's keys share a cluster slot and a
 * script may touch a session and its user's index together.
 */

/** Characters left as they are; everything else becomes %XX of its UTF-8 bytes. */
const SAFE = /^[A-Za-z0-9._~-]$/;

export function encodeKeyPart(value: string): string {
  let out = '';
  for (const ch of value) {
    if (SAFE.test(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeKeyPart(encoded: string): string {
  return decodeURIComponent(encoded);
}

/** A key prefix must not itself need encoding (it is written into patterns and hash tags as is). */
export const KEY_PREFIX_PATTERN = /^[A-Za-z0-9._-]+$/;

export class RedisKeys {
  private readonly st: string;

  constructor(readonly prefix: string) {
    if (!KEY_PREFIX_PATTERN.test(prefix)) throw new Error(`invalid Redis key prefix "${prefix}": letters, digits, . _ - only`);
    this.st = `${prefix}:st`;
  }

  /** the list holding one session's recent turns */
  session(userId: string, sessionId: string): string {
    return `${this.st}:s:{${encodeKeyPart(userId)}}:${encodeKeyPart(sessionId)}`;
  }

  /** the sorted set of a user's live sessions (member: the raw session id; score: expiry, ms) */
  userSessions(userId: string): string {
    return `${this.st}:u:{${encodeKeyPart(userId)}}`;
  }

  /** SCAN pattern matching every short-term session list */
  allSessionsPattern(): string {
    return `${this.st}:s:*`;
  }

  /** SCAN pattern matching every per-user session index */
  allUserIndexesPattern(): string {
    return `${this.st}:u:*`;
  }

  /** the user whose session index `key` is (a key matched by allUserIndexesPattern) */
  userOfIndex(key: string): string {
    const open = key.indexOf('{', this.st.length);
    return decodeKeyPart(key.slice(open + 1, key.lastIndexOf('}')));
  }

  /** the tombstone of one memory (see ports/tombstones.ts) */
  tombstone(userId: string, id: string): string {
    return `${this.prefix}:gone:{${encodeKeyPart(userId)}}:${encodeKeyPart(id)}`;
  }

  /** BullMQ's `prefix` option: its queue keys live under it */
  get bullPrefix(): string {
    return `${this.prefix}:bull`;
  }
}
