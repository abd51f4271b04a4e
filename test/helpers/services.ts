import { join } from 'node:path';
import pino from 'pino';
import { wire, type Services, type WireOptions } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { Memory } from '../../src/memory/memory.js';
import { tmpDir } from './tmp.js';

export const silentLogger = () => pino({ level: 'silent' });

/** A memory service on a fresh SQLite file with the `hash` embedder and no services. */
export async function testMemory(overrides: Record<string, unknown> = {}, options: WireOptions = {}): Promise<{ memory: Memory; services: Services; dir: string }> {
  const dir = tmpDir();
  const config = parseConfig({ sqlite_path: join(dir, 'nc.db'), embedding_model: 'hash', log_level: 'silent', ...overrides });
  const services = await wire(config, { logger: silentLogger(), ...options });
  return { memory: new Memory(services), services, dir };
}
