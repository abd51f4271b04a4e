import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { wire, type Services, type WireOptions } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { Memory } from '../../src/memory/memory.js';
import { tmpDir } from './tmp.js';

export const silentLogger = () => pino({ level: 'silent' });

/** A logger at `level` whose lines the test reads: parsed (`lines`), or as written (`text`). */
export function capturingLogger(level: pino.Level): { logger: pino.Logger; lines: () => Array<{ level: number; msg: string } & Record<string, unknown>>; text: () => string } {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return {
    logger: pino({ level }, sink),
    lines: () => out.map((l) => JSON.parse(l) as { level: number; msg: string } & Record<string, unknown>),
    text: () => out.join('\n'),
  };
}

/** A memory service on a fresh SQLite file with the `hash` embedder and no services. */
export async function testMemory(overrides: Record<string, unknown> = {}, options: WireOptions = {}): Promise<{ memory: Memory; services: Services; dir: string }> {
  const dir = tmpDir();
  const config = parseConfig({ sqlite_path: join(dir, 'nc.db'), embedding_model: 'hash', log_level: 'silent', ...overrides });
  const services = await wire(config, { logger: silentLogger(), ...options });
  return { memory: new Memory(services), services, dir };
}
