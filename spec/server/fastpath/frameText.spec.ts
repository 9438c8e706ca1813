/**
 * fastpath/frameText.ts against its plain twin (bench/plain/server/fastpath/frameText.ts): the
 * same text for any UTF-8 bytes and range. The single-frame ASCII shortcut it switches is held
 * to the general path by spec/server/webSocketFrameReader.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decodeUtf8 as plainDecode } from '../../../bench/plain/server/fastpath/frameText.js';
import { decodeUtf8 } from '../../../src/server/fastpath/frameText.js';

describe('decodeUtf8', () => {
  it('decodes what its plain twin decodes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(), fc.nat(), (text, a, b) => {
        const bytes = Buffer.from(text, 'utf8');
        const start = Math.min(a, b) % (bytes.length + 1);
        const end = start + ((Math.max(a, b) - Math.min(a, b)) % (bytes.length - start + 1));
        expect(decodeUtf8(bytes, start, end)).toBe(plainDecode(bytes, start, end));
      }),
      { numRuns: 1_000 },
    );
  });
});
