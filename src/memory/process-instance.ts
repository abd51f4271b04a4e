import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * This process among every process sharing the durable store, on any host: `host:pid:random`. A pid
 * names a process on its own host only — two hosts sharing one PostgreSQL database run processes with
 * equal pids — and is reused after the process ends; the random part tells a restarted process from
 * the one before it.
 */
export const INSTANCE = instanceId(hostname(), process.pid);

export function instanceId(host: string, pid: number, nonce = randomBytes(4).toString('hex')): string {
  return `${host}:${pid}:${nonce}`;
}

/** The host and pid of an instance id (a host name holds no ':'); null when it is not one. */
export function parseInstance(id: string): { host: string; pid: number } | null {
  const m = /^(.+):(\d+):([0-9a-f]+)$/.exec(id);
  return m ? { host: m[1]!, pid: Number(m[2]) } : null;
}

/** How a report names an instance: its pid, and its host when that is not this one. */
export function describeInstance(id: string, here = hostname()): string {
  const p = parseInstance(id);
  if (!p) return id;
  return p.host === here ? `${p.pid}` : `${p.pid} on ${p.host}`;
}
