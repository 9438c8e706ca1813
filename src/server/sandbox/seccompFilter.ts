/**
 * The seccomp program a restricted-network sandbox adds (bwrap `--seccomp FD`), as the
 * binary's `codex-linux-sandbox` does: `socket` and `socketpair` for any family but AF_UNIX
 * fail with EPERM, so a denied connection says "Operation not permitted" on both executors
 * (and `sandboxDenied` sees it). Everything else is allowed; a syscall of a foreign ABI
 * (32-bit or x32 on x86-64, where `socketcall` would slip past the check) fails with EPERM.
 *
 * Classic BPF, one 8-byte `sock_filter` {u16 code, u8 jt, u8 jf, u32 k} per instruction,
 * little-endian (both architectures with a filter here are). Guarded by spec/server/sandbox/seccompFilter.spec.ts.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const AF_UNIX = 1;

/** Offsets in `struct seccomp_data`: nr (u32), arch (u32), ip (u64), args[6] (u64). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

interface Abi {
  readonly audit: number;
  readonly socket: number;
  readonly socketpair: number;
  /** Syscall numbers at or above this are another ABI on the same arch (x32). */
  readonly foreignFrom: number;
}

const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  x64: { audit: 0xc000003e, socket: 41, socketpair: 53, foreignFrom: 0x40000000 },
  arm64: { audit: 0xc00000b7, socket: 198, socketpair: 199, foreignFrom: 0xffffffff },
};

type Instruction = readonly [code: number, jt: number, jf: number, k: number];

/** The filter for `arch`; undefined where this executor has no filter (then: no sandbox). */
export function networkSeccompFilter(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const abi = ABIS[arch];
  if (abi === undefined) return undefined;
  const program: Instruction[] = [
    /* 0 */ [BPF_LD_W_ABS, 0, 0, ARCH],
    /* 1 */ [BPF_JEQ_K, 0, 7, abi.audit], // foreign arch → 9 (deny)
    /* 2 */ [BPF_LD_W_ABS, 0, 0, NR],
    /* 3 */ [BPF_JGE_K, 5, 0, abi.foreignFrom], // x32 → 9 (deny)
    /* 4 */ [BPF_JEQ_K, 1, 0, abi.socket], // → 6
    /* 5 */ [BPF_JEQ_K, 0, 2, abi.socketpair], // not a socket call → 8 (allow)
    /* 6 */ [BPF_LD_W_ABS, 0, 0, ARG0_LOW],
    /* 7 */ [BPF_JEQ_K, 0, 1, AF_UNIX], // another family → 9 (deny)
    /* 8 */ [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
    /* 9 */ [BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM],
  ];
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    const offset = index * 8;
    bytes.writeUInt16LE(code, offset);
    bytes.writeUInt8(jt, offset + 2);
    bytes.writeUInt8(jf, offset + 3);
    bytes.writeUInt32LE(k >>> 0, offset + 4);
  });
  return bytes;
}
