import { ml_kem768, type KEMPrepared } from '@noble/post-quantum/ml-kem.js';
import { MLKEM768_PUBLIC_KEY_LENGTH } from './constants.js';

/**
 * ML-KEM-768 on `@noble/post-quantum`, shared by both providers (Node 20 has no ML-KEM).
 *
 * Noble's "prepared" keys cache the expanded matrix Â of a public key, which roughly halves
 * the cost of later encapsulations and decapsulations. Static keys are used on every
 * handshake, so the prepared form is cached per key *array instance* (identities and parsed
 * public keys keep theirs for life); ephemeral keys cost about the same either way.
 */
const preparedByKey = new WeakMap<Uint8Array, KEMPrepared>();

// FIPS 203 dk layout: dk_pke (384·k) ‖ ek (384·k + 32) ‖ H(ek) ‖ z; k = 3 for ML-KEM-768.
const EK_OFFSET_IN_DK = 1152;

function prepared(cacheKey: Uint8Array, publicKey: Uint8Array): KEMPrepared {
  let entry = preparedByKey.get(cacheKey);
  if (entry === undefined) {
    entry = ml_kem768.prepare(publicKey);
    preparedByKey.set(cacheKey, entry);
  }
  return entry;
}

export function mlkem768KeyPair(seed: Uint8Array): {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
} {
  return ml_kem768.keygen(seed);
}

export function mlkem768Encapsulate(
  publicKey: Uint8Array,
  randomness: Uint8Array,
): { cipherText: Uint8Array; sharedSecret: Uint8Array } {
  return prepared(publicKey, publicKey).encapsulate(randomness);
}

export function mlkem768Decapsulate(cipherText: Uint8Array, secretKey: Uint8Array): Uint8Array {
  const publicKey = secretKey.subarray(
    EK_OFFSET_IN_DK,
    EK_OFFSET_IN_DK + MLKEM768_PUBLIC_KEY_LENGTH,
  );
  return prepared(secretKey, publicKey).decapsulate(cipherText, secretKey);
}
