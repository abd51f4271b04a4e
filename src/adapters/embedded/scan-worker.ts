// The helper thread of split scans (scan-thread.ts): waits for a job in the control block, scans the
// chunks it can claim, and never returns to its event loop.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { instantiateKernels, type KernelFns, type WasmMemory } from './kernels.js';
import { HELPER_MEMORIES } from './scan-thread.js';
import { helpScan, MEMORY, SEQ, STATUS } from './split-scan.js';

const { ctrl, port } = workerData as { ctrl: Int32Array; port: MessagePort };
const memories = new Map<number, { kernels: KernelFns; memory: WasmMemory }>();

// The lowest priority (nice 19), for this thread only (Linux: setpriority on a thread id): woken at
// normal priority it preempted the caller on the caller's own core whenever the other was busy, so
// the caller waited instead of scanning (a --cpu-prof of the caller: ~1.3 ms a pass in Atomics.notify
// at load 6). At nice 19 it runs when a core is free, and otherwise the caller scans (nearly) alone.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 19);
} catch {
  // not Linux: the thread keeps the process's priority
}

let seen = Atomics.load(ctrl, SEQ);
Atomics.store(ctrl, STATUS, 1);
for (;;) {
  Atomics.wait(ctrl, SEQ, seen);
  const seq = Atomics.load(ctrl, SEQ);
  if (seq === seen) continue;
  seen = seq;
  for (let m; (m = receiveMessageOnPort(port)); ) {
    const { id, memory } = m.message as { id: number; memory: WasmMemory };
    memories.set(id, { kernels: instantiateKernels(memory), memory });
    if (memories.size > HELPER_MEMORIES) memories.delete(memories.keys().next().value!);
  }
  const held = memories.get(Atomics.load(ctrl, MEMORY));
  if (!held) continue;
  try {
    // views of the memory as it is now (it may have grown since the last job)
    const buffer = held.memory.buffer;
    helpScan(held.kernels, new Int32Array(buffer), new Float32Array(buffer), ctrl, seq);
  } catch {
    // a helper that lags behind may read a block that has moved (a trap): the caller took its chunks back
  }
}
