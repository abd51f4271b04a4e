import { readFileSync } from 'node:fs';

/** The HTTP processes of a `serve --processes N`: its children (from /proc, Linux); none once it is gone. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
