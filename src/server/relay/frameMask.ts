/**
 * Masking of the frames a WebSocket client sends (RFC 6455 §5.3): a fresh, unpredictable 4-byte
 * key per frame, XORed over its payload. Natively through `bufferutil` (the optional dependency
 * `ws` masks with) when it is installed, in JavaScript otherwise (spec/server/relay/
 * batchedBinaryFrames.spec.ts checks the masked frames against `ws`'s receiver).
 */
import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';

/** `bufferutil`'s in-place XOR: `unmask(buffer, key)` (masking and unmasking are the same). */
type InPlaceMask = (buffer: Buffer, key: Buffer) => void;

function loadNativeMask(): InPlaceMask | undefined {
  try {
    const native = createRequire(import.meta.url)('bufferutil') as { unmask?: InPlaceMask };
    return typeof native.unmask === 'function' ? native.unmask : undefined;
  } catch {
    return undefined; // not installed: the JavaScript loop below
  }
}

const nativeMask = loadNativeMask();

/** XORs `payload` with `key` (4 bytes), in place. */
export function maskInPlace(payload: Buffer, key: Buffer): void {
  if (nativeMask && payload.length >= 32) {
    nativeMask(payload, key);
    return;
  }
  for (let index = 0; index < payload.length; index++) payload[index]! ^= key[index & 3]!;
}

/** Mask keys come from a pool of CSPRNG bytes, each byte handed out once. */
const POOL_BYTES = 8 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** Writes a fresh 4-byte mask key at `target[offset]` and returns it (a view of `target`). */
export function writeMaskKey(target: Buffer, offset: number): Buffer {
  if (poolAt === POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  pool.copy(target, offset, poolAt, poolAt + 4);
  poolAt += 4;
  return target.subarray(offset, offset + 4);
}
