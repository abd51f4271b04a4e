/** JSON deeper than this is refused before it is parsed: no API body needs it, and deep values make recursive code (serializers, validators) overflow the stack. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/**
 * Whether a JSON text nests arrays/objects deeper than `max`, by one pass over its bytes (brackets
 * inside strings do not count; UTF-8 continuation bytes never equal an ASCII bracket or quote).
 */
export function exceedsDepth(buf: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPEN.has(c)) {
      if (++depth > max) return true;
    } else if (CLOSE.has(c)) depth--;
  }
  return false;
}

/** `verify` hook of express.json: throws the `entity.too.deep` error the error middleware maps to 400. */
export function verifyDepth(_req: unknown, _res: unknown, buf: Buffer): void {
  if (exceedsDepth(buf)) throw Object.assign(new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), { type: 'entity.too.deep' });
}
