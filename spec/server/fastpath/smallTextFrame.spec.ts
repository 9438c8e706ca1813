/**
 * smallTextFrame against its plain twin (always the general path): when it answers, the
 * Latin-1 bytes of its string are the RFC 6455 Text frame of the message (FIN, opcode 1,
 * unmasked, 7-bit or 16-bit length) that the general path writes.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { smallTextFrame } from '../../../src/server/fastpath/smallTextFrame.js';
import { smallTextFrame as plainSmallTextFrame } from '../../../bench/plain/server/fastpath/smallTextFrame.js';

function textFrame(message: string): Buffer {
  const payload = Buffer.from(message, 'utf8');
  const header =
    payload.length < 126
      ? Buffer.from([0x81, payload.length])
      : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([header, payload]);
}

describe('smallTextFrame (fast path) against its plain twin', () => {
  it('is the Text frame of short ASCII messages and leaves everything else to the general path', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({
            unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
            maxLength: 1100,
          }),
          fc.string({ unit: 'grapheme', maxLength: 300 }),
        ),
        (message) => {
          expect(plainSmallTextFrame(message)).toBeUndefined();
          const frame = smallTextFrame(message);
          const ascii = /^[\x00-\x7f]*$/.test(message);
          if (!ascii || message.length > 1024) {
            expect(frame).toBeUndefined();
          } else {
            expect(Buffer.from(frame!, 'latin1')).toEqual(textFrame(message));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('switches to the 16-bit length at 126 bytes', () => {
    for (const length of [0, 125, 126, 1024])
      expect(Buffer.from(smallTextFrame('a'.repeat(length))!, 'latin1')).toEqual(
        textFrame('a'.repeat(length)),
      );
    expect(smallTextFrame('a'.repeat(1025))).toBeUndefined();
    expect(smallTextFrame('é')).toBeUndefined();
  });
});
