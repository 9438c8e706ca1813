import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { STATUS_CODES as NODE_STATUS_CODES } from 'node:http';
import { browserPlatform } from '../../src/platform/browser/browserPlatform.js';
import { nodeCrypto } from '../../src/platform/node/nodeCrypto.js';
import { nodePlatform } from '../../src/platform/node/nodePlatform.js';
import { nobleCrypto } from '../../src/platform/noble/nobleCrypto.js';
import { platform, platformCrypto } from '../../src/platform/index.js';
import { STATUS_CODES } from '../../src/registry/errors.js';

/** Plain arrays, so a Buffer and a Uint8Array with the same bytes compare equal. */
const plain = (bytes: Uint8Array): number[] => [...bytes];

describe('platform seam', () => {
  it('is the Node implementation outside the browser bundle', () => {
    expect(platform).toBe(nodePlatform);
    expect(platformCrypto).toBe(nodeCrypto);
  });

  it('browser and Node agree on UTF-8 for any string, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const bytes = nodePlatform.utf8Encode(text);
        expect(plain(browserPlatform.utf8Encode(text))).toEqual(plain(bytes));
        expect(browserPlatform.utf8ByteLength(text)).toBe(bytes.length);
        expect(browserPlatform.utf8Decode(bytes)).toBe(nodePlatform.utf8Decode(bytes));
        const target = new Uint8Array(bytes.length + 3);
        expect(browserPlatform.utf8EncodeInto(text, target, 3)).toBe(bytes.length);
        expect(plain(target.subarray(3))).toEqual(plain(bytes));
      }),
    );
  });

  it('browser and Node agree on strict and checked UTF-8, base64 and Latin-1 of any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const strict = nodePlatform.utf8DecodeStrict(bytes);
        expect(browserPlatform.utf8DecodeStrict(bytes)).toBe(strict);
        // utf8Checked: the bytes themselves on Node, their text in browsers, or neither.
        expect(browserPlatform.utf8Checked(bytes)).toBe(strict);
        expect(nodePlatform.utf8Checked(bytes)).toBe(strict === undefined ? undefined : bytes);
        const base64 = nodePlatform.base64Encode(bytes);
        expect(browserPlatform.base64Encode(bytes)).toBe(base64);
        expect(plain(browserPlatform.base64Decode(base64))).toEqual(plain(bytes));
        const url = nodePlatform.base64UrlEncode(bytes);
        expect(browserPlatform.base64UrlEncode(bytes)).toBe(url);
        expect(plain(browserPlatform.base64UrlDecode(url))).toEqual(plain(bytes));
        const latin1 = nodePlatform.latin1Decode(bytes);
        expect(browserPlatform.latin1Decode(bytes)).toBe(latin1);
        expect(latin1).toBe(String.fromCharCode(...bytes)); // ISO-8859-1, not windows-1252
      }),
    );
    expect(browserPlatform.utf8DecodeStrict(Uint8Array.of(0xc3))).toBeUndefined();
  });

  it('browser (noble) and Node (OpenSSL) crypto give the same bytes', () => {
    const n = nodeCrypto;
    const b = nobleCrypto;
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 12, maxLength: 12 }),
        fc.uint8Array({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 20 }),
        (key, nonce, data, ad) => {
          expect(plain(b.sha256(data, ad))).toEqual(plain(n.sha256(data, ad)));
          expect(plain(b.hmacSha256(key, data, ad))).toEqual(plain(n.hmacSha256(key, data, ad)));
          expect(plain(b.sha3_256(data))).toEqual(plain(n.sha3_256(data)));
          expect(plain(b.sha3_512(data))).toEqual(plain(n.sha3_512(data)));
          expect(plain(b.shake128(data, 200))).toEqual(plain(n.shake128(data, 200)));
          expect(plain(b.shake256(40, data, ad))).toEqual(plain(n.shake256(40, data, ad)));
          const sealed = n.aes256GcmSeal(key, nonce, ad, data);
          expect(plain(b.aes256GcmSeal(key, nonce, ad, data))).toEqual(plain(sealed));
          expect(plain(b.aes256GcmOpen(key, nonce, ad, sealed)!)).toEqual(plain(data));
          const tampered = sealed.slice();
          tampered[0]! ^= 1;
          expect(b.aes256GcmOpen(key, nonce, ad, tampered)).toBeUndefined();
          expect(plain(b.x25519PublicKey(key))).toEqual(plain(n.x25519PublicKey(key)));
        },
      ),
      { numRuns: 30 },
    );
  });

  it('browser random UUIDs are lowercase v4', () => {
    expect(browserPlatform.randomUUID()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('the registry reason phrases are Node’s', () => {
    expect(STATUS_CODES).toEqual({ ...NODE_STATUS_CODES });
  });
});
