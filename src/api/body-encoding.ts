import { isUtf8 } from 'node:buffer';

/**
 * `verify` hook of express.json: a body declared (or defaulted) as UTF-8 must be valid UTF-8. The
 * parser would otherwise decode broken bytes — a truncated sequence, a surrogate encoded as UTF-8
 * (ED A0 80) — to U+FFFD and store text the client never sent. Throws the `entity.not.utf8` error the
 * error middleware maps to 400.
 */
export function verifyUtf8(_req: unknown, _res: unknown, buf: Buffer, encoding: string | null): void {
  if ((encoding === null || encoding === 'utf-8' || encoding === 'utf8') && !isUtf8(buf)) {
    throw Object.assign(new Error('the body is not valid UTF-8'), { type: 'entity.not.utf8' });
  }
}
