import { createMemory, instantiateKernels, WASM_PAGE as PAGE, type KernelFns, type WasmMemory } from './kernels.js';

/**
 * The linear memory the scan kernels read, and a small allocator over it. Blocks are freed into a
 * list per exact size and reused; partitions grow by doubling, so only a few sizes ever occur. Memory
 * is never handed back to the system (WebAssembly memories cannot shrink): an index that shrank keeps
 * its high-water mark until the process restarts. Views are re-created whenever the memory grows
 * (the old views keep the old length), so callers hold offsets, never views. The memory is shared: a
 * helper thread may scan part of a partition (split-scan.ts).
 */
export class Arena {
  readonly kernels: KernelFns;
  readonly memory: WasmMemory;
  private top = 16;
  private readonly free = new Map<number, number[]>();
  private freeBytes = 0;
  private scratchOffset = 0;
  private scratchSize = 0;
  private helperBlock = 0;
  u8!: Uint8Array;
  i8!: Int8Array;
  i16!: Int16Array;
  i32!: Int32Array;
  f32!: Float32Array;

  constructor(initialBytes = PAGE) {
    this.memory = createMemory(Math.max(1, Math.ceil(initialBytes / PAGE)));
    this.kernels = instantiateKernels(this.memory);
    this.refreshViews();
  }

  /** A block of `size` bytes (a multiple of 16), 16-byte aligned. */
  alloc(size: number): number {
    const list = this.free.get(size);
    if (list && list.length > 0) {
      this.freeBytes -= size;
      return list.pop()!;
    }
    const offset = this.top;
    this.ensure(offset + size);
    this.top = offset + size;
    return offset;
  }

  /** Grows the block in place when it is the last one; false when it is not (allocate and copy). */
  extend(offset: number, size: number, newSize: number): boolean {
    if (offset + size !== this.top) return false;
    this.ensure(offset + newSize);
    this.top = offset + newSize;
    return true;
  }

  release(offset: number, size: number): void {
    if (offset + size === this.top) {
      this.top = offset;
      return;
    }
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(offset);
    this.freeBytes += size;
  }

  /** A reusable block of at least `size` bytes, valid until the next call. */
  scratch(size: number): number {
    if (size > this.scratchSize) {
      if (this.scratchSize > 0) this.release(this.scratchOffset, this.scratchSize);
      this.scratchSize = Math.max(size, this.scratchSize * 2);
      this.scratchOffset = this.alloc(this.scratchSize);
    }
    return this.scratchOffset;
  }

  /**
   * A block of `size` bytes for a helper thread's kernel output, allocated once and never released or
   * moved: a helper that lags behind may still write to it after its scan was taken back.
   */
  helperOut(size: number): number {
    if (this.helperBlock === 0) this.helperBlock = this.alloc(size);
    return this.helperBlock;
  }

  /** bytes reserved from the system, and bytes held by live blocks */
  stats(): { reserved: number; used: number } {
    return { reserved: this.memory.buffer.byteLength, used: this.top - this.freeBytes - this.scratchSize };
  }

  private ensure(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    // grow by half again at least: each grow may copy the whole memory
    const want = Math.max(end, Math.floor(have * 1.5));
    this.memory.grow(Math.ceil((want - have) / PAGE));
    this.refreshViews();
  }

  private refreshViews(): void {
    const b = this.memory.buffer;
    this.u8 = new Uint8Array(b);
    this.i8 = new Int8Array(b);
    this.i16 = new Int16Array(b);
    this.i32 = new Int32Array(b);
    this.f32 = new Float32Array(b);
  }
}
