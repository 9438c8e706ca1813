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

  it('decodes large texts, ASCII or not, as its plain twin does', () => {
    const large = fc
      .tuple(
        fc.string({ unit: fc.constantFrom('A', '"', '{', '\u0000', '\u007f') }),
        fc.integer({ min: 4096, max: 20_000 }),
        fc.constantFrom('', 'é', '€', '\u0080', '😀'),
        fc.nat(),
      )
      .map(([unit, length, other, at]) => {
        const ascii = (unit || 'a').repeat(Math.ceil(length / (unit.length || 1)));
        const index = at % (ascii.length + 1);
        return ascii.slice(0, index) + other + ascii.slice(index);
      });
    fc.assert(
      fc.property(large, fc.nat(8), fc.nat(8), (text, cutStart, cutEnd) => {
        const bytes = Buffer.from(text, 'utf8');
        const start = cutStart;
        const end = bytes.length - cutEnd;
        expect(decodeUtf8(bytes, start, end)).toBe(plainDecode(bytes, start, end));
        expect(decodeUtf8(bytes, 0, bytes.length)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});
