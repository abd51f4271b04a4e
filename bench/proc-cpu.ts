// CPU seconds of other processes, read from /proc/<pid>/stat (utime + stime, every thread of the
// process): what a bench charges to each part of a deployment (API processes, database backends,
// redis-server) per operation, which on a loaded machine says more than wall time. Also from /proc:
// what a process wrote, and the most memory it held.
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: Linux reports utime/stime in these ticks (100 on every mainstream kernel; `getconf CLK_TCK`) */
const TICKS_PER_SECOND = 100;

/** The fields of a /proc stat file after the command name (field 2, which may hold spaces and
 * parentheses: counted after its last ')'), or null once the process is gone (or without /proc). */
function statFields(path: string): string[] | null {
  let stat: string;
  try {
    stat = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime (fields 14 and 15 of the line, 12 and 13 after the name and the state), in seconds */
function cpuSecondsOf(fields: string[] | null): number | null {
  return fields ? (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND : null;
}

/**
 * CPU seconds the process has used so far (with `mainThread`, its main thread's alone: a Node process
 * is bound by its JavaScript thread), or null once it is gone (or on a system without /proc).
 */
export function processCpuSeconds(pid: number, mainThread = false): number | null {
  return cpuSecondsOf(statFields(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`));
}

/** CPU seconds one thread of this process has used so far, or null once it is gone. */
export function threadCpuSeconds(tid: number): number | null {
  return cpuSecondsOf(statFields(`/proc/self/task/${tid}/stat`));
}

/** The processes whose parent is `pid` (field 4 of their stat line). */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => Number(statFields(`/proc/${p}/stat`)?.[1]) === pid);
}

/** CPU seconds of each pid (gone ones left out). */
export function cpuOf(pids: Iterable<number>, mainThread = false): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const s = processCpuSeconds(pid, mainThread);
    if (s !== null) out.set(pid, s);
  }
  return out;
}

/**
 * CPU seconds used between two readings by the processes of the later one: a pid that appeared in
 * between counts from zero (a connection opened during the window), one that disappeared is lost.
 */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let s = 0;
  for (const [pid, v] of after) s += v - (before.get(pid) ?? 0);
  return s;
}

/** CPU seconds of this process (every thread), from process.cpuUsage. */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * Bytes a process has handed to write() and pwrite() so far (`wchar` of /proc/<pid>/io: pipes and
 * sockets included) and bytes it has dirtied for the disk (`write_bytes`), or null once it is gone.
 */
export function processWrites(pid: number): { wchar: number; disk: number } | null {
  let io: string;
  try {
    io = readFileSync(`/proc/${pid}/io`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(io.match(new RegExp(`^${name}: (\\d+)`, 'm'))?.[1] ?? NaN);
  return { wchar: field('wchar'), disk: field('write_bytes') };
}

/** The most memory the process has held resident so far (`VmHWM` of /proc/<pid>/status), in bytes, or null once it is gone. */
export function peakResidentBytes(pid: number): number | null {
  try {
    const kb = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}
