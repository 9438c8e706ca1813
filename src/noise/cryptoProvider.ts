/**
 * The primitives the Noise channel needs, behind one small interface so the same handshake
 * code runs on `node:crypto` (fast) or on the `@noble/*` libraries (portable). Every method
 * is synchronous and returns plain `Uint8Array`s. A provider may cache a derived form of a key
 * (an OpenSSL key object, an expanded ML-KEM key) only per key *array instance* (a `WeakMap`),
 * so it lives no longer than the caller's own copy of the key; callers therefore never mutate a
 * key array after handing it to a provider.
 */

import type { PlatformCrypto } from '../platform/index.js';

/**
 * Source of random bytes, a fresh array per call (the handshake zeroes what it drew once used).
 * Tests inject a deterministic one (the vectors' DummyRng).
 */
export type RandomSource = (length: number) => Uint8Array;

/** The platform's primitives that the Noise channel uses (SHA-3 and SHAKE stay inside ML-KEM). */
type NoisePrimitives = Omit<PlatformCrypto, 'sha3_256' | 'sha3_512' | 'shake128' | 'shake256'>;

/**
 * The primitives the Noise channel runs on (X25519, AES-256-GCM, hashes, ML-KEM-768). The
 * default is the platform's; `name` says which provider a channel used.
 */
export interface NoiseCryptoProvider extends NoisePrimitives {
  /** Short name for diagnostics and benchmarks, e.g. `node` or `noble`. */
  readonly name: string;

  /** ML-KEM-768 key pair from a 64-byte seed `d ‖ z` (FIPS 203 `ML-KEM.KeyGen_internal`). */
  mlkem768KeyPair(seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array };
  /** Encapsulates to `publicKey` with the 32-byte randomness `m`; throws on a malformed key. */
  mlkem768Encapsulate(
    publicKey: Uint8Array,
    randomness: Uint8Array,
  ): { cipherText: Uint8Array; sharedSecret: Uint8Array };
  /** Decapsulates with the 2400-byte secret key (implicit rejection: never throws on a bad ct). */
  mlkem768Decapsulate(cipherText: Uint8Array, secretKey: Uint8Array): Uint8Array;
}
