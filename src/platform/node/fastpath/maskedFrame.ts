/**
 * The writing side of our client WebSocket (fastpath/webSocketClient.ts): frames masked as
 * RFC 6455 §5.3 asks of a client, each with a fresh key from `node:crypto`'s random bytes.
 * Masks with `bufferutil`'s native XOR when the package is installed (an optional
 * dependency; `ws` masks with it too), else with a byte loop. Guarded by
 * spec/platform/node/fastpath/webSocketClient.spec.ts (the server unmasks every frame).
 */
import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';

type MaskInto = (
  source: Buffer,
  mask: Buffer,
  output: Buffer,
  offset: number,
  length: number,
) => void;

/** `bufferutil`'s native mask (`ws` masks with it too), or undefined without the package. */
const nativeMask = ((): MaskInto | undefined => {
  try {
    const loaded = createRequire(import.meta.url)('bufferutil') as { mask?: unknown };
    return typeof loaded.mask === 'function' ? (loaded.mask as MaskInto) : undefined;
  } catch {
    return undefined;
  }
})();

/** Masking keys come from this pool of random bytes, refilled when used up. */
const maskPool = Buffer.allocUnsafe(8192);
let maskPoolOffset = maskPool.length;

function nextMaskKey(): Buffer {
  if (maskPoolOffset === maskPool.length) {
    randomFillSync(maskPool);
    maskPoolOffset = 0;
  }
  maskPoolOffset += 4;
  return maskPool.subarray(maskPoolOffset - 4, maskPoolOffset);
}

/** One masked frame (§5.2) holding `payload`: text as UTF-8, bytes as they are. */
export function maskedFrame(opcode: number, fin: boolean, payload: string | Uint8Array): Buffer {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const start = 6 + lengthBytes;
  const frame = Buffer.allocUnsafe(start + length);
  frame[0] = (fin ? 0x80 : 0) | opcode;
  if (lengthBytes === 0) frame[1] = 0x80 | length;
  else if (lengthBytes === 2) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeUInt32BE(Math.floor(length / 0x1_0000_0000), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  const key = nextMaskKey();
  key.copy(frame, start - 4);
  const source =
    typeof payload === 'string'
      ? (frame.write(payload, start), frame.subarray(start))
      : Buffer.from(payload.buffer, payload.byteOffset, payload.length);
  if (nativeMask !== undefined && length >= 32) nativeMask(source, key, frame, start, length);
  else for (let i = 0; i < length; i++) frame[start + i] = source[i]! ^ key[i & 3]!;
  return frame;
}
