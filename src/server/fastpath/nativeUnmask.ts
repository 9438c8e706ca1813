/**
 * Unmasks a client frame's payload in place (RFC 6455 §5.3) with `bufferutil`, the native XOR
 * `ws` itself masks with (an optional dependency of this package), and checks it for ASCII with
 * Node's native `isAscii`. Without `bufferutil`, and for short payloads where the native call
 * costs more than the loop, the byte loop of the plain twin
 * (bench/plain/server/fastpath/nativeUnmask.ts). Held to the twin by
 * spec/server/fastpath/nativeUnmask.spec.ts.
 */
import { isAscii } from 'node:buffer';
import { createRequire } from 'node:module';

type InPlaceUnmask = (buffer: Buffer, mask: Buffer) => void;

/** Below this many bytes the JavaScript loop is as fast as the call (`ws` uses 32 too). */
const NATIVE_FROM_BYTES = 32;

const nativeUnmask = loadNativeUnmask();

function loadNativeUnmask(): InPlaceUnmask | undefined {
  try {
    const loaded = createRequire(import.meta.url)('bufferutil') as { unmask?: unknown };
    return typeof loaded.unmask === 'function' ? (loaded.unmask as InPlaceUnmask) : undefined;
  } catch {
    return undefined; // not installed: the loop below
  }
}

/**
 * XORs `data[start, end)` with the 4-byte masking key just before it (`data[start - 4, start)`);
 * true when every unmasked byte is ASCII (below 0x80).
 */
export function unmaskPayload(data: Buffer, start: number, end: number): boolean {
  if (nativeUnmask !== undefined && end - start >= NATIVE_FROM_BYTES) {
    const payload = data.subarray(start, end);
    nativeUnmask(payload, data.subarray(start - 4, start));
    return isAscii(payload);
  }
  let bits = 0;
  for (let index = start; index < end; index++) {
    const byte = (data[index] as number) ^ (data[start - 4 + ((index - start) & 3)] as number);
    data[index] = byte;
    bits |= byte;
  }
  return bits < 0x80;
}
