/** Small byte helpers shared by the Noise modules. */
import { platform } from '../platform/index.js';
import { decodeCanonicalBase64 as decodeCanonicalProtocolBase64 } from '../protocol/base64.js';

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

export { concatBytes } from '../platform/bytes.js';

/** Writes `value` (a non-negative safe integer) as an unsigned 64-bit big-endian number. */
export function writeU64BigEndian(target: Uint8Array, offset: number, value: number): void {
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  view.setUint32(offset, Math.floor(value / 0x1_0000_0000));
  view.setUint32(offset + 4, value >>> 0);
}

/** Constant-time equality of two byte strings of public length. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * A copy as a plain `Uint8Array`. (`Buffer#slice` returns a view, so `.slice()` is not a copy
 * when the caller hands us a Node `Buffer`, e.g. a WebSocket frame.)
 */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

/** A plain `Uint8Array` view of a Node `Buffer` (no copy), so results compare equal everywhere. */
export function asPlainBytes(buffer: Uint8Array): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** Standard base64 with padding (what Rust's `base64::STANDARD` emits and accepts). */
export function encodeBase64(bytes: Uint8Array): string {
  return platform.base64Encode(bytes);
}

/**
 * Decodes canonical standard base64 into plain bytes, or returns `undefined`. Like Rust's
 * STANDARD engine it rejects missing or extra padding, whitespace and non-zero trailing bits
 * (protocol/base64.ts `decodeCanonicalBase64`).
 */
export function decodeCanonicalBase64(text: string): Uint8Array | undefined {
  const decoded = decodeCanonicalProtocolBase64(text);
  return decoded && asPlainBytes(decoded);
}
