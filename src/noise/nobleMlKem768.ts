import { ml_kem768, type KEMPrepared } from '@noble/post-quantum/ml-kem.js';
import { platform } from '../platform/index.js';
import { MLKEM768_PUBLIC_KEY_LENGTH } from './constants.js';

/**
 * ML-KEM-768 on `@noble/post-quantum`, for the portable provider (pure JavaScript; the node
 * provider uses `nodeMlKem768.ts`, which hashes with OpenSSL).
 *
 * Noble's "prepared" keys cache the expanded matrix Â of a public key, which roughly halves
 * the cost of later encapsulations and decapsulations; preparing costs about what it saves
 * once. Static keys recur on every handshake (the executor's pinned key, a reconnecting
 * harness's key, our own identity's key), so prepared forms are kept:
 *  - for encapsulation, in a small LRU keyed by the public key's bytes (public data);
 *  - for decapsulation, per secret-key array instance (identities keep theirs for life), so
 *    no secret-derived value is ever used as a map key.
 */
const ENCAPSULATION_CACHE_SIZE = 32;
const preparedByPublicKey = new Map<string, KEMPrepared>();
const preparedBySecretKey = new WeakMap<Uint8Array, KEMPrepared>();

// FIPS 203 dk layout: dk_pke (384·k) ‖ ek (384·k + 32) ‖ H(ek) ‖ z; k = 3 for ML-KEM-768.
const EK_OFFSET_IN_DK = 1152;

function preparedForEncapsulation(publicKey: Uint8Array): KEMPrepared {
  const cacheKey = platform.base64Encode(publicKey);
  let entry = preparedByPublicKey.get(cacheKey);
  if (entry !== undefined) {
    // Refresh recency: Map iteration order is insertion order.
    preparedByPublicKey.delete(cacheKey);
  } else {
    entry = ml_kem768.prepare(publicKey);
    if (preparedByPublicKey.size >= ENCAPSULATION_CACHE_SIZE) {
      const oldest = preparedByPublicKey.keys().next();
      if (oldest.done !== true) preparedByPublicKey.delete(oldest.value);
    }
  }
  preparedByPublicKey.set(cacheKey, entry);
  return entry;
}

export function nobleMlKem768KeyPair(seed: Uint8Array): {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
} {
  return ml_kem768.keygen(seed);
}

export function nobleMlKem768Encapsulate(
  publicKey: Uint8Array,
  randomness: Uint8Array,
): { cipherText: Uint8Array; sharedSecret: Uint8Array } {
  return preparedForEncapsulation(publicKey).encapsulate(randomness);
}

export function nobleMlKem768Decapsulate(
  cipherText: Uint8Array,
  secretKey: Uint8Array,
): Uint8Array {
  let entry = preparedBySecretKey.get(secretKey);
  if (entry === undefined) {
    entry = ml_kem768.prepare(
      secretKey.subarray(EK_OFFSET_IN_DK, EK_OFFSET_IN_DK + MLKEM768_PUBLIC_KEY_LENGTH),
    );
    preparedBySecretKey.set(secretKey, entry);
  }
  return entry.decapsulate(cipherText, secretKey);
}
