import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on loopback (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface RedisHandle {
  port: number;
  url: string;
  /** stops the server (SIGTERM, or SIGKILL with `hard`) */
  stop(hard?: boolean): Promise<void>;
  /** starts it again on the same port (after stop) */
  start(): Promise<void>;
}

/**
 * Starts a private redis-server on a free port for one test file — never the shared one on 6379.
 * Nothing is persisted; stop() kills it.
 */
export async function startRedis(port?: number): Promise<RedisHandle> {
  const p = port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'nc-redis-'));
  cleanupOnExit(dir);
  let child: ChildProcess | null = null;

  const start = async () => {
    child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${p}: ${out}`)), 10_000);
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child!.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${out}`));
      });
    });
  };

  const stop = async (hard = false) => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    child = null;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(hard ? 'SIGKILL' : 'SIGTERM');
    });
  };

  await start();
  return {
    port: p,
    url: `redis://127.0.0.1:${p}`,
    stop: async (hard) => {
      await stop(hard);
    },
    start,
  };
}

/** Removes a temp folder at exit, whatever happened. */
export function cleanupOnExit(dir: string): void {
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}
