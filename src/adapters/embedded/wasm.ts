/**
 * A minimal WebAssembly binary writer: just enough to emit the scan kernels of `kernels.ts` without a
 * toolchain (no wat2wasm, no compiler at install). Opcodes follow the WebAssembly 2.0 spec, including
 * the fixed-width SIMD proposal that Node 20 (V8 ≥ 9.1) ships enabled.
 */

export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;

export type ValType = typeof I32 | typeof F32 | typeof V128;

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

function name(s: string): number[] {
  const b = [...Buffer.from(s, 'utf8')];
  return [...uleb(b.length), ...b];
}

function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

const simd = (code: number, ...imm: number[]): number[] => [0xfd, ...uleb(code), ...imm];
/** memarg: alignment hint (log2 bytes), then offset */
const mem = (align: number, offset: number): number[] => [align, ...uleb(offset)];

/** The instructions the kernels use (add others from the spec's opcode table as needed). */
export const op = {
  block: [0x02, 0x40],
  if: [0x04, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  get: (local: number) => [0x20, ...uleb(local)],
  set: (local: number) => [0x21, ...uleb(local)],
  tee: (local: number) => [0x22, ...uleb(local)],
  f32Load: (offset = 0) => [0x2a, ...mem(2, offset)],
  f32Store: (offset = 0) => [0x38, ...mem(2, offset)],
  f32Gt: [0x5e],
  f32Mul: [0x94],
  f32ConvertI32S: [0xb2],
  i32Load: (offset = 0) => [0x28, ...mem(2, offset)],
  i32Store: (offset = 0) => [0x36, ...mem(2, offset)],
  i32Load8U: (offset = 0) => [0x2d, ...mem(0, offset)],
  i32Eqz: [0x45],
  i32Const: (n: number) => [0x41, ...sleb(n)],
  i32LtU: [0x49],
  i32GeU: [0x4f],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Mul: [0x6c],
  i32And: [0x71],
  i32Shl: [0x74],
  v128Load: (offset = 0) => simd(0x00, ...mem(4, offset)),
  /** 8 bytes, each sign-extended to an i16 lane: the load and the widening in one instruction */
  v128Load8x8S: (offset = 0) => simd(0x01, ...mem(3, offset)),
  v128Store: (offset = 0) => simd(0x0b, ...mem(4, offset)),
  v128Zero: simd(0x0c, ...new Array<number>(16).fill(0)),
  v128Or: simd(0x50),
  v128AnyTrue: simd(0x53),
  f32x4Splat: simd(0x13),
  f32x4Gt: simd(0x44),
  f32x4Mul: simd(0xe6),
  f32x4ConvertI32x4S: simd(0xfa),
  i32x4Add: simd(0xae),
  i32x4DotI16x8S: simd(0xba),
};

export interface FuncDef {
  name: string;
  params: ValType[];
  results: ValType[];
  /** extra locals, numbered after the params */
  locals: ValType[];
  body: number[][];
}

/**
 * A module that imports its memory as env.memory and exports each function by name. `sharedMaxPages`:
 * the memory is a shared one of at most that many pages (threads may scan it at once).
 */
export function assemble(funcs: readonly FuncDef[], options: { sharedMaxPages?: number } = {}): Uint8Array {
  const types = funcs.map((f) => [0x60, ...vec(f.params.map((p) => [p])), ...vec(f.results.map((r) => [r]))]);
  // limits: flags 0x00 = min only; 0x03 = shared, min and max
  const limits = options.sharedMaxPages === undefined ? [0x00, ...uleb(1)] : [0x03, ...uleb(1), ...uleb(options.sharedMaxPages)];
  const imports = [[...name('env'), ...name('memory'), 0x02, ...limits]];
  const functions = funcs.map((_, i) => uleb(i));
  const exports = funcs.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]);
  const codes = funcs.map((f) => {
    const locals = vec(f.locals.map((t) => [1, t]));
    const body = [...locals, ...f.body.flat(), ...op.end];
    return [...uleb(body.length), ...body];
  });
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    ...section(2, vec(imports)),
    ...section(3, vec(functions)),
    ...section(7, vec(exports)),
    ...section(10, vec(codes)),
  ]);
}
