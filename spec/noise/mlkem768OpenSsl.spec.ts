/**
 * Both ML-KEM-768 implementations (node:crypto-backed `nodeMlKem768.ts` and the
 * `@noble/post-quantum` path of `nobleMlKem768.ts`) against an independent one: OpenSSL's,
 * through Python `cryptography` (spec/fixtures/noise/mlkem768-openssl.json, provenance inside).
 * The key pair from a 64-byte seed (d ‖ z) must be OpenSSL's; OpenSSL's ciphertext must
 * decapsulate to its shared secret; and a random, a one-bit-tampered, an all-zero and an
 * all-0xFF ciphertext must be implicitly rejected to the very secrets OpenSSL derived. OpenSSL
 * drew its own encapsulation randomness, so encapsulation is checked by round trip only.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import {
  nobleMlKem768Decapsulate,
  nobleMlKem768Encapsulate,
  nobleMlKem768KeyPair,
} from '../../src/noise/nobleMlKem768.js';
import {
  nodeMlKem768Decapsulate,
  nodeMlKem768Encapsulate,
  nodeMlKem768KeyPair,
} from '../../src/noise/nodeMlKem768.js';

interface OpenSslCase {
  seed: string;
  pk: string;
  ct: string;
  ss: string;
  rct: string;
  rss: string;
  tct: string;
  tss: string;
  e0: string;
  e1: string;
}

const { cases } = JSON.parse(
  readFileSync(new URL('../fixtures/noise/mlkem768-openssl.json', import.meta.url), 'utf8'),
) as { cases: OpenSslCase[] };

const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, 'hex'));
const hexOf = (value: Uint8Array): string => Buffer.from(value).toString('hex');

const IMPLEMENTATIONS = [
  ['node:crypto', nodeMlKem768KeyPair, nodeMlKem768Encapsulate, nodeMlKem768Decapsulate],
  ['@noble/post-quantum', nobleMlKem768KeyPair, nobleMlKem768Encapsulate, nobleMlKem768Decapsulate],
] as const;

describe.each(IMPLEMENTATIONS)(
  'ML-KEM-768 (%s) against OpenSSL',
  (_name, keyPair, encapsulate, decapsulate) => {
    it('has the cases', () => {
      expect(cases.length).toBeGreaterThanOrEqual(8);
    });

    it.each(cases.map((vector, index) => [index, vector] as const))(
      'case %i: key pair from the seed, decapsulation, implicit rejection',
      (_index, vector) => {
        const { publicKey, secretKey } = keyPair(bytes(vector.seed));
        expect(hexOf(publicKey)).toBe(vector.pk);
        expect(hexOf(decapsulate(bytes(vector.ct), secretKey))).toBe(vector.ss);
        expect(hexOf(decapsulate(bytes(vector.rct), secretKey))).toBe(vector.rss);
        expect(hexOf(decapsulate(bytes(vector.tct), secretKey))).toBe(vector.tss);
        expect(hexOf(decapsulate(new Uint8Array(1088), secretKey))).toBe(vector.e0);
        expect(hexOf(decapsulate(new Uint8Array(1088).fill(0xff), secretKey))).toBe(vector.e1);
        const randomness = bytes(vector.seed).subarray(0, 32);
        const sealed = encapsulate(bytes(vector.pk), randomness);
        expect(hexOf(decapsulate(sealed.cipherText, secretKey))).toBe(hexOf(sealed.sharedSecret));
      },
    );
  },
);
