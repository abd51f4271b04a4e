import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';

export interface JsonLine {
  line: number;
  /** the line's bytes as they are in the file (without its newline): what `--skip-invalid` writes back */
  raw: Buffer;
  value?: unknown;
  /** why the line is not a JSON value: invalid UTF-8, or not JSON */
  problem?: string;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const NEWLINE = 0x0a;

/**
 * The non-blank lines of a JSON Lines file, read as bytes so that every door treats bytes alike
 * (docs/import-export.md, text rules): a UTF-8 byte-order mark at the start of the file is skipped, as
 * the HTTP body parser skips it, and a line that is not valid UTF-8 is a bad line, as an HTTP body is a
 * 400 — never decoded to U+FFFD and stored as text nobody sent.
 */
export async function* jsonLines(file: string): AsyncGenerator<JsonLine> {
  let line = 0;
  let rest: Buffer = Buffer.alloc(0);
  let first = true;
  const emit = (bytes: Buffer): JsonLine | null => {
    line++;
    let raw = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes;
    if (first) {
      first = false;
      if (raw.subarray(0, 3).equals(BOM)) raw = raw.subarray(3);
    }
    if (!isUtf8(raw)) return { line, raw, problem: 'not valid UTF-8 (save the file as UTF-8)' };
    const text = raw.toString('utf8');
    if (text.trim() === '') return null;
    try {
      return { line, raw, value: JSON.parse(text) };
    } catch (err) {
      return { line, raw, problem: `not valid JSON (${(err as Error).message})` };
    }
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    let at: number;
    while ((at = buf.indexOf(NEWLINE)) >= 0) {
      const out = emit(buf.subarray(0, at));
      if (out) yield out;
      buf = buf.subarray(at + 1);
    }
    rest = Buffer.from(buf);
  }
  if (rest.length > 0) {
    const out = emit(rest);
    if (out) yield out;
  }
}
