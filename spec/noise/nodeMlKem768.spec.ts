import { describe, expect, it } from '@jest/globals';
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js';
import { createHash } from 'node:crypto';
import {
  nodeMlKem768Decapsulate,
  nodeMlKem768Encapsulate,
  nodeMlKem768KeyPair,
} from '../../src/noise/nodeMlKem768.js';
import { hex } from './dummyRng.js';

/** Deterministic test bytes: SHAKE256(label ‖ i). */
function testBytes(label: string, i: number, length: number): Uint8Array {
  return Uint8Array.from(
    createHash('shake256', { outputLength: length }).update(`${label}/${i}`).digest(),
  );
}

/** Whether some Â entry of this seed needs more than 3 SHAKE128 blocks (504 bytes). */
function needsLongMatrixStream(seed: Uint8Array): boolean {
  const rho = createHash('sha3-512').update(seed.subarray(0, 32)).update(Uint8Array.of(3)).digest();
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      const stream = createHash('shake128', { outputLength: 504 })
        .update(rho.subarray(0, 32))
        .update(Uint8Array.of(j, i))
        .digest();
      let accepted = 0;
      for (let b = 0; b < stream.length; b += 3) {
        const b0 = stream[b] ?? 0;
        const b1 = stream[b + 1] ?? 0;
        const b2 = stream[b + 2] ?? 0;
        if ((b0 | ((b1 & 15) << 8)) < 3329) accepted++;
        if (((b1 >> 4) | (b2 << 4)) < 3329) accepted++;
      }
      if (accepted < 256) return true;
    }
  }
  return false;
}

const SEEDS = 300;

describe('nodeMlKem768 (FIPS 203 over node:crypto hashes)', () => {
  it(`is byte-identical to @noble/post-quantum for ${SEEDS} seeds (keygen, encaps, decaps)`, () => {
    let longStreams = 0;
    for (let i = 0; i < SEEDS; i++) {
      const seed = testBytes('seed', i, 64);
      const m = testBytes('m', i, 32);
      if (needsLongMatrixStream(seed)) longStreams++;
      const expected = ml_kem768.keygen(seed);
      const actual = nodeMlKem768KeyPair(seed);
      expect(hex(actual.publicKey)).toBe(hex(expected.publicKey));
      expect(hex(actual.secretKey)).toBe(hex(expected.secretKey));

      const reference = ml_kem768.encapsulate(expected.publicKey, m);
      // A copy of the key: the expansion cache is keyed by content, not by array.
      const encapsulated = nodeMlKem768Encapsulate(actual.publicKey.slice(), m);
      expect(hex(encapsulated.cipherText)).toBe(hex(reference.cipherText));
      expect(hex(encapsulated.sharedSecret)).toBe(hex(reference.sharedSecret));

      // The key generation's own secret-key array (expansion kept from keygen) and a copy
      // (expanded and hash-checked afresh) decapsulate alike.
      expect(hex(nodeMlKem768Decapsulate(reference.cipherText, actual.secretKey))).toBe(
        hex(reference.sharedSecret),
      );
      expect(hex(nodeMlKem768Decapsulate(reference.cipherText, actual.secretKey.slice()))).toBe(
        hex(reference.sharedSecret),
      );
    }
    // The seeds exercise the rare path where rejection sampling needs a longer SHAKE128 stream.
    expect(longStreams).toBeGreaterThan(0);
  });

  it('encapsulates repeatedly to a cached key and to more keys than the cache holds', () => {
    const keys = Array.from({ length: 40 }, (_, i) => nodeMlKem768KeyPair(testBytes('lru', i, 64)));
    for (let round = 0; round < 2; round++) {
      keys.forEach(({ publicKey, secretKey }, i) => {
        const m = testBytes(`lru-m${round}`, i, 32);
        const reference = ml_kem768.encapsulate(publicKey, m);
        const actual = nodeMlKem768Encapsulate(publicKey, m);
        expect(hex(actual.cipherText)).toBe(hex(reference.cipherText));
        expect(hex(actual.sharedSecret)).toBe(hex(reference.sharedSecret));
        expect(hex(nodeMlKem768Decapsulate(actual.cipherText, secretKey))).toBe(
          hex(reference.sharedSecret),
        );
      });
    }
  });

  it('implicitly rejects a tampered ciphertext with J(z ‖ c), as noble does', () => {
    for (let i = 0; i < 40; i++) {
      const seed = testBytes('reject', i, 64);
      const { publicKey, secretKey } = nodeMlKem768KeyPair(seed);
      const { cipherText, sharedSecret } = nodeMlKem768Encapsulate(
        publicKey,
        testBytes('reject-m', i, 32),
      );
      const tampered = cipherText.slice();
      const position = (i * 131) % tampered.length; // spans both c1 and c2
      tampered[position] = (tampered[position] ?? 0) ^ (1 << (i % 8));
      const rejected = nodeMlKem768Decapsulate(tampered, secretKey);
      expect(hex(rejected)).not.toBe(hex(sharedSecret));
      expect(hex(rejected)).toBe(
        hex(ml_kem768.decapsulate(tampered, ml_kem768.keygen(seed).secretKey)),
      );
      const z = seed.subarray(32);
      const j = createHash('shake256', { outputLength: 32 }).update(z).update(tampered).digest();
      expect(hex(rejected)).toBe(hex(j));
    }
  });

  it('refuses a public key of the wrong length or with a coefficient ≥ q', () => {
    const { publicKey } = nodeMlKem768KeyPair(testBytes('bad-pk', 0, 64));
    const m = testBytes('bad-pk-m', 0, 32);
    expect(() => nodeMlKem768Encapsulate(publicKey.subarray(0, 1183), m)).toThrow(
      'ML-KEM-768 public key must be 1184 bytes, got 1183',
    );
    // Set the first 12-bit coefficient to 4095.
    const unreduced = publicKey.slice();
    unreduced[0] = 0xff;
    unreduced[1] = (unreduced[1] ?? 0) | 0x0f;
    expect(() => nodeMlKem768Encapsulate(unreduced, m)).toThrow(/modulus check/);
    expect(() => ml_kem768.encapsulate(unreduced, m)).toThrow(/modulus/);
    // The last coefficient of t̂ (bytes 1149–1151) is checked too; ρ (the last 32 bytes) is not.
    const lastUnreduced = publicKey.slice();
    lastUnreduced[1151] = 0xff;
    expect(() => nodeMlKem768Encapsulate(lastUnreduced, m)).toThrow(/modulus check/);
    const otherRho = publicKey.slice();
    otherRho[1183] = (otherRho[1183] ?? 0) ^ 0xff;
    expect(hex(nodeMlKem768Encapsulate(otherRho, m).cipherText)).toBe(
      hex(ml_kem768.encapsulate(otherRho, m).cipherText),
    );
    expect(() => nodeMlKem768Encapsulate(publicKey, m.subarray(1))).toThrow(
      'ML-KEM-768 encapsulation randomness must be 32 bytes, got 31',
    );
  });

  it('refuses a secret key of the wrong length or whose public-key hash does not match', () => {
    const { publicKey, secretKey } = nodeMlKem768KeyPair(testBytes('bad-sk', 0, 64));
    const { cipherText } = nodeMlKem768Encapsulate(publicKey, testBytes('bad-sk-m', 0, 32));
    expect(() => nodeMlKem768Decapsulate(cipherText, secretKey.subarray(0, 2399))).toThrow(
      'ML-KEM-768 secret key must be 2400 bytes, got 2399',
    );
    for (const position of [1152 + 5, 2336 + 7]) {
      // A flipped bit in the embedded public key or in its stored hash.
      const corrupted = secretKey.slice();
      corrupted[position] = (corrupted[position] ?? 0) ^ 1;
      expect(() => nodeMlKem768Decapsulate(cipherText, corrupted)).toThrow(/hash check/);
      expect(() => ml_kem768.decapsulate(cipherText, corrupted)).toThrow(/hash check/);
    }
    // An embedded public key with a coefficient ≥ q, its hash fixed up: FIPS 203 only asks for
    // the hash check here, but such a key cannot come from key generation, so we refuse it
    // (noble decapsulates with it anyway).
    const unreduced = secretKey.slice();
    unreduced[1152] = 0xff;
    unreduced[1153] = (unreduced[1153] ?? 0) | 0x0f;
    unreduced.set(createHash('sha3-256').update(unreduced.subarray(1152, 2336)).digest(), 2336);
    expect(() => nodeMlKem768Decapsulate(cipherText, unreduced)).toThrow(
      "invalid ML-KEM-768 secret key's embedded public key: a coefficient is not below q = 3329 (FIPS 203 modulus check)",
    );
    expect(() => nodeMlKem768Decapsulate(cipherText.subarray(0, 1087), secretKey)).toThrow(
      'ML-KEM-768 ciphertext must be 1088 bytes, got 1087',
    );
    expect(() => nodeMlKem768KeyPair(new Uint8Array(63))).toThrow(
      'ML-KEM-768 seed must be 64 bytes, got 63',
    );
  });

  it('does not modify its inputs', () => {
    const seed = testBytes('inputs', 0, 64);
    const seedCopy = seed.slice();
    const { publicKey, secretKey } = nodeMlKem768KeyPair(seed);
    const [pkCopy, skCopy] = [publicKey.slice(), secretKey.slice()];
    const m = testBytes('inputs-m', 0, 32);
    const mCopy = m.slice();
    const { cipherText } = nodeMlKem768Encapsulate(publicKey, m);
    const ctCopy = cipherText.slice();
    nodeMlKem768Decapsulate(cipherText, secretKey);
    expect([seed, publicKey, secretKey, m, cipherText]).toEqual([
      seedCopy,
      pkCopy,
      skCopy,
      mCopy,
      ctCopy,
    ]);
  });
});
