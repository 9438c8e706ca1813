import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  Base64,
  decodeBase64,
  decodeBase64Strict,
  decodeCanonicalBase64,
  decodedBase64Length,
  encodeBase64,
  isStandardBase64,
} from '../../src/protocol/index.js';

describe('base64', () => {
  it('encodes standard padded base64 and decodes it back', () => {
    expect(encodeBase64('hi\n')).toBe('aGkK');
    expect(encodeBase64(new Uint8Array([0xfb, 0xff]))).toBe('+/8=');
    expect(Buffer.from(decodeBase64('+/8='))).toEqual(Buffer.from([0xfb, 0xff]));
    expect(decodeBase64('')).toHaveLength(0);
  });

  it('refuses url-safe, unpadded or garbage input with a clear error', () => {
    for (const bad of [
      '-_8=',
      '+/8',
      'not base64!',
      'aGk K',
      'A===',
      '====',
      'aG==aGkK',
      'aGkKa',
      'aGkK\n',
    ]) {
      expect(() => decodeBase64(bad)).toThrow(/invalid base64/);
      expect(Base64.safeParse(bad).success).toBe(false);
    }
  });

  it('accepts every padding form and round-trips random bytes', () => {
    for (let n = 0; n < 64; n += 1) {
      const text = Buffer.from(Array.from({ length: n }, (_, i) => (i * 97 + n) & 255)).toString(
        'base64',
      );
      expect(isStandardBase64(text)).toBe(true);
      expect(Base64.safeParse(text).success).toBe(true);
      expect(Buffer.from(decodeBase64(text)).toString('base64')).toBe(text);
    }
  });

  it('computes the decoded length without decoding', () => {
    for (const n of [0, 1, 2, 3, 4, 1024 * 1024]) {
      expect(decodedBase64Length(Buffer.alloc(n).toString('base64'))).toBe(n);
    }
  });

  it('encodes a view of a larger buffer without its neighbours', () => {
    const backing = Buffer.from('xxhixx');
    expect(encodeBase64(backing.subarray(2, 4))).toBe(encodeBase64('hi'));
  });

  it("the executor's strict decoder accepts exactly what isStandardBase64 accepts", () => {
    const alphabet = fc.constantFrom(...'AZaz09+/=-_ \n!'.split(''));
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 12 }), (text) => {
        let accepted = true;
        try {
          decodeBase64Strict(text);
        } catch {
          accepted = false;
        }
        expect(accepted).toBe(isStandardBase64(text));
      }),
    );
  });

  it("words the strict decoder's failures as the Rust base64 crate does", () => {
    expect(() => decodeBase64Strict('not base64!')).toThrow('Invalid symbol 32, offset 3.');
    expect(() => decodeBase64Strict('abc=d')).toThrow('Invalid symbol 61, offset 3.');
    expect(() => decodeBase64Strict('abcde')).toThrow('Invalid input length.');
    expect(() => decodeBase64Strict('ab=')).toThrow('Invalid padding');
  });

  it('decodes canonical base64 only: standard, padded, with zero padding bits', () => {
    const canonical = (text: string): boolean =>
      isStandardBase64(text) &&
      Buffer.from(Buffer.from(text, 'base64')).toString('base64') === text;
    const alphabet = fc.constantFrom(...'AQRgw+/=-_ \n\u0000é\u0141\uff21');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: alphabet, maxLength: 12 }), fc.string()), (text) => {
        const bytes = decodeCanonicalBase64(text);
        expect(bytes !== undefined).toBe(canonical(text));
        if (bytes !== undefined) expect(Buffer.from(bytes).toString('base64')).toBe(text);
      }),
      { numRuns: 2000 },
    );
    for (const text of ['', 'QQ==', 'QUI=', 'QUJD'])
      expect(decodeCanonicalBase64(text)).toBeDefined();
    for (const text of ['QR==', 'QUJ=', 'QUŁD', 'QU-D', 'QQ==QUJD', 'Q===', 'QUJ\u0000'])
      expect(decodeCanonicalBase64(text)).toBeUndefined();
  });
});
