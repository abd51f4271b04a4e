import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { siblingThread } from '../thread.js';
import type { WasmMemory } from './kernels.js';
import { CONTROL_BYTES, SEQ, STATUS } from './split-scan.js';

/**
 * memories the helper keeps kernels for (one per searched embedder; a reload makes a new one): few,
 * since a memory it holds is not freed (the index's old arena after a reload)
 */
export const HELPER_MEMORIES = 2;

/**
 * The helper thread of split scans (split-scan.ts): one per process, started on the first scan big
 * enough to split, and used once it is up. It never returns to its event loop: it sleeps in
 * Atomics.wait on the control block, scans what it can claim, and reads new kernel memories from its
 * port synchronously. Until it is up, and for good once it failed, scans run on one thread.
 */
export class ScanThread {
  readonly ctrl = new Int32Array(new SharedArrayBuffer(CONTROL_BYTES));
  /** split scans run, and chunks of them the helper's answers covered (tests, bench) */
  scans = 0;
  helped = 0;
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private failed = false;
  private readonly ids = new WeakMap<WasmMemory, number>();
  private nextId = 1;
  private posted: WasmMemory | null = null;

  /** The helper's id for `memory` (sent to it when new), or null when the helper cannot help yet. */
  ready(memory: WasmMemory): number | null {
    if (this.failed) return null;
    if (!this.worker) {
      this.start();
      return null;
    }
    if (Atomics.load(this.ctrl, STATUS) !== 1) return null;
    let id = this.ids.get(memory);
    if (id === undefined) this.ids.set(memory, (id = this.nextId++));
    if (this.posted !== memory) {
      // delivered to the port's queue before this returns: the helper reads it once woken
      this.port!.postMessage({ id, memory });
      this.posted = memory;
    }
    return id;
  }

  /** Wakes the helper for the job just written to the control block. */
  wake(): void {
    Atomics.notify(this.ctrl, SEQ, 1);
  }

  /** Ends the helper; later scans run on one thread. */
  async close(): Promise<void> {
    this.failed = true;
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private start(): void {
    const { port1, port2 } = new MessageChannel();
    const workerData = { ctrl: this.ctrl, port: port2 };
    const options = { workerData, transferList: [port2] };
    const worker = siblingThread(import.meta.url, 'scan-worker', options);
    this.worker = worker;
    this.port = port1;
    const gone = () => {
      if (this.worker !== worker) return;
      this.failed = true;
      this.worker = null;
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    // never what keeps a process alive
    worker.unref();
    port1.unref();
  }
}

let shared: ScanThread | null = null;

/** The process's helper thread (created on first use; the thread itself starts on the first split scan). */
export function scanThread(): ScanThread {
  return (shared ??= new ScanThread());
}
