/**
 * fastpath/nativeUnmask.ts against its plain twin (bench/plain/server/fastpath/nativeUnmask.ts,
 * the byte loop): the same unmasked bytes and the same ASCII verdict for any payload, key and
 * position in the chunk, short (the loop) and long (`bufferutil`), and nothing outside the
 * payload changed.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createRequire } from 'node:module';
import { unmaskPayload as plainUnmask } from '../../../bench/plain/server/fastpath/nativeUnmask.js';
import { unmaskPayload } from '../../../src/server/fastpath/nativeUnmask.js';

const payloadBytes = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc.uint8Array({ minLength: 30, maxLength: 5_000 }),
  // Mostly ASCII, so that one high byte anywhere decides the verdict.
  fc
    .tuple(fc.integer({ min: 1, max: 5_000 }), fc.option(fc.nat(), { nil: undefined }))
    .map(([length, high]) => {
      const bytes = new Uint8Array(length).fill(0x61);
      if (high !== undefined) bytes[high % length] = 0x80 | (high & 0x7f);
      return bytes;
    }),
);

describe('unmaskPayload', () => {
  it('is installed with bufferutil here, so the native path is the one tested', () => {
    const bufferutil = createRequire(import.meta.url)('bufferutil') as { unmask: unknown };
    expect(typeof bufferutil.unmask).toBe('function');
  });

  it('unmasks as its plain twin does, in place, touching nothing else', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 9 }),
        fc.uint8Array({ minLength: 4, maxLength: 4 }),
        payloadBytes,
        fc.uint8Array({ maxLength: 9 }),
        (before, key, masked, after) => {
          const chunk = Buffer.concat([before, key, masked, after]);
          const start = before.length + 4;
          const end = start + masked.length;
          const fast = Buffer.from(chunk);
          const plain = Buffer.from(chunk);
          const fastAscii = unmaskPayload(fast, start, end);
          const plainAscii = plainUnmask(plain, start, end);
          expect(fastAscii).toBe(plainAscii);
          expect(fast.equals(plain)).toBe(true);
          expect(fast.subarray(0, start).equals(chunk.subarray(0, start))).toBe(true);
          expect(fast.subarray(end).equals(chunk.subarray(end))).toBe(true);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
